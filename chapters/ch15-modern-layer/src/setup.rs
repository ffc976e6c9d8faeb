//! The chapter's choices: its model's sizes, its prompt, how many tokens it generates, the
//! recipes whose next token it compares, the samplers whose generations it prints, and its
//! mixture of experts.

use crate::model::ModelConfig;
use crate::moe::MoeConfig;
use crate::recipe::Recipe;
use crate::sampling::Sampler;

/// The chapter's model: 32 tokens, 32 features, 4 layers of 4 query heads sharing 2
/// key/value heads, a feed-forward width of 64.
pub const CONFIG: ModelConfig = ModelConfig {
    vocab_size: 32,
    d_model: 32,
    n_layers: 4,
    n_heads: 4,
    n_kv_heads: 2,
    d_ff: 64,
};

/// The prompt's token ids.
pub const PROMPT: [i64; 6] = [0, 7, 14, 21, 28, 3];

/// How many tokens each generation appends.
pub const N_NEW: usize = 6;

/// The recipes whose next token the chapter compares: every piece on, then one changed.
pub fn variants() -> Vec<(&'static str, Recipe)> {
    let all = Recipe::default();
    vec![
        ("all on", all),
        (
            "theta 500000",
            Recipe {
                theta: 500_000.0,
                ..all
            },
        ),
        (
            "Llama 3.1 scaling",
            Recipe {
                theta: 500_000.0,
                llama31_scaling: true,
                ..all
            },
        ),
        (
            "no QK-norm",
            Recipe {
                qk_norm: false,
                ..all
            },
        ),
        (
            "no softcap",
            Recipe {
                softcap: None,
                ..all
            },
        ),
        (
            "no sinks",
            Recipe {
                sinks: false,
                ..all
            },
        ),
        (
            "StreamingLLM, 2 sink tokens",
            Recipe {
                sink_tokens: 2,
                ..all
            },
        ),
        (
            "output gate",
            Recipe {
                output_gate: true,
                ..all
            },
        ),
        (
            "all global",
            Recipe {
                local_per_global: None,
                ..all
            },
        ),
    ]
}

/// The samplers whose generations the chapter prints (and chapter 20, on a real model).
pub fn samplers() -> Vec<(&'static str, Sampler)> {
    let plain = Sampler::PLAIN;
    vec![
        ("temperature 1", plain),
        (
            "temperature 0.7, top-k 5",
            Sampler {
                temperature: 0.7,
                top_k: Some(5),
                ..plain
            },
        ),
        (
            "top-p 0.9",
            Sampler {
                top_p: Some(0.9),
                ..plain
            },
        ),
        (
            "temperature 1.5, min-p 0.1",
            Sampler {
                temperature: 1.5,
                min_p: Some(0.1),
                ..plain
            },
        ),
        (
            "repetition penalty 1.3",
            Sampler {
                repetition_penalty: Some(1.3),
                ..plain
            },
        ),
        (
            "top-k 1",
            Sampler {
                top_k: Some(1),
                ..plain
            },
        ),
    ]
}

/// The chapter's mixture of experts: 8 experts of width 16 on the model's 32 features, 2
/// per token.
pub const MOE: MoeConfig = MoeConfig {
    d_model: 32,
    d_expert: 16,
    n_experts: 8,
    top_k: 2,
};

/// The tokens the mixture of experts routes.
pub const MOE_TOKENS: usize = 6;

/// DeepSeek-V3's `routed_scaling_factor`.
pub const ROUTED_SCALING: f32 = 2.5;
