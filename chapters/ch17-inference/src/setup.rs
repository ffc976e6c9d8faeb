//! The chapter's choices: its target model and draft, its paged cache, its requests and
//! prompts, how many tokens it generates and drafts, and its MLA layer.

use ch15_modern_layer::{ModelConfig, Recipe};

use crate::mla::MlaConfig;

/// The target model: chapter 15's tiny model, 4 layers.
pub const CONFIG: ModelConfig = ModelConfig {
    vocab_size: 32,
    d_model: 32,
    n_layers: 4,
    n_heads: 4,
    n_kv_heads: 2,
    d_ff: 64,
};

/// Layers the draft keeps of the target.
pub const DRAFT_LAYERS: usize = 2;

/// Tokens per block of the paged cache.
pub const BLOCK_SIZE: usize = 4;

/// Blocks in the pool.
pub const N_BLOCKS: usize = 16;

/// The system prompt every request starts with.
pub const SYSTEM: [i64; 10] = [1, 5, 9, 13, 17, 21, 25, 29, 2, 6];

/// What each request adds after the system prompt.
pub const USER: [&[i64]; 4] = [&[3, 7], &[11, 15, 19], &[3, 7], &[4]];

/// The prompt of the fork and of speculative decoding.
pub const PROMPT: [i64; 6] = [0, 7, 14, 21, 28, 3];

/// Tokens each generation appends.
pub const N_NEW: usize = 4;

/// Tokens speculative decoding appends.
pub const N_SPECULATE: usize = 12;

/// Draft tokens per target pass.
pub const K: usize = 3;

/// The MLA layer: 4 heads, 8 + 4 query/key features per head, 8 value features, a latent
/// of 16.
pub const MLA: MlaConfig = MlaConfig {
    d_model: 32,
    n_heads: 4,
    nope_dim: 8,
    rope_dim: 4,
    v_dim: 8,
    latent_dim: 16,
};

/// Tokens the MLA layer reads.
pub const MLA_TOKENS: usize = 6;

/// Every layer global: the paged cache holds every token of every layer.
pub fn recipe() -> Recipe {
    Recipe {
        local_per_global: None,
        ..Recipe::default()
    }
}
