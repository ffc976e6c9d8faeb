//! The chapter's choices: its model's sizes, its prompt, how many tokens it generates, its
//! sliding window, and the real models whose cache sizes it prints.

use crate::model::DecoderConfig;

/// The chapter's model: 16 tokens, 16 features, 4 query heads sharing 2 key/value heads.
pub const CONFIG: DecoderConfig = DecoderConfig {
    vocab_size: 16,
    context_length: 16,
    d_model: 16,
    n_heads: 4,
    n_kv_heads: 2,
    window: None,
};

/// The prompt's token ids.
pub const PROMPT: [i64; 3] = [0, 6, 12];

/// How many tokens each generation appends.
pub const N_NEW: usize = 6;

/// The sliding window of the last part, in tokens.
pub const WINDOW: usize = 4;

/// A model shape whose cache size the chapter prints.
pub struct ModelShape {
    /// The model's name.
    pub name: &'static str,
    /// Attention layers.
    pub layers: usize,
    /// Query heads per layer.
    pub heads: usize,
    /// Key/value heads per layer.
    pub kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// Tokens in the context.
    pub tokens: usize,
    /// Tokens in the cache: the context, or the sliding window.
    pub cached: usize,
}

/// GPT-2 small, Llama 2 7B (multi-head), Llama 3 8B (8 key/value heads for 32 query
/// heads) and Mistral 7B (the same heads, and a sliding window of 4096 tokens).
pub const MODELS: [ModelShape; 4] = [
    ModelShape {
        name: "GPT-2 small",
        layers: 12,
        heads: 12,
        kv_heads: 12,
        head_dim: 64,
        tokens: 1024,
        cached: 1024,
    },
    ModelShape {
        name: "Llama 2 7B",
        layers: 32,
        heads: 32,
        kv_heads: 32,
        head_dim: 128,
        tokens: 4096,
        cached: 4096,
    },
    ModelShape {
        name: "Llama 3 8B",
        layers: 32,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        tokens: 8192,
        cached: 8192,
    },
    ModelShape {
        name: "Mistral 7B",
        layers: 32,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        tokens: 32768,
        cached: 4096,
    },
];
