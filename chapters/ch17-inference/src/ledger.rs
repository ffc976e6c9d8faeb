//! What one token costs in the cache of published models: MHA (a key and value per
//! head), GQA (per group of heads), MQA (one for all heads) and MLA (a latent and a
//! shared RoPE key, DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient
//! Mixture-of-Experts Language Model").
//!
//! The numbers are those of each model's `config.json` on the Hugging Face Hub:
//! `num_hidden_layers`, `num_key_value_heads` (or `multi_query`), the head width
//! (`hidden_size / num_attention_heads`), and for MLA `kv_lora_rank` and
//! `qk_rope_head_dim`.

use ch14_generation::cache_size::cache_bytes;

use crate::mla_bytes::mla_bytes_per_token;

/// What a layer caches per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cached {
    /// A key and a value of `head_dim` per key/value head.
    KeysValues {
        /// Key/value heads.
        kv_heads: usize,
        /// Features per head.
        head_dim: usize,
    },
    /// A latent of `latent_dim` and a RoPE key of `rope_dim`, shared by the heads.
    Latent {
        /// `kv_lora_rank`.
        latent_dim: usize,
        /// `qk_rope_head_dim`.
        rope_dim: usize,
    },
}

/// A published model's attention, as its cache sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelCard {
    /// The model's name.
    pub name: &'static str,
    /// MHA, GQA, MQA or MLA.
    pub attention: &'static str,
    /// Attention layers.
    pub layers: usize,
    /// What each layer caches per token.
    pub cached: Cached,
}

/// Llama 2 7B, Llama 3 8B and 70B, Falcon 7B, DeepSeek-V2 and DeepSeek-V3.
// ANCHOR: cards
pub const CARDS: [ModelCard; 6] = [
    ModelCard {
        name: "Llama 2 7B",
        attention: "MHA",
        layers: 32,
        cached: Cached::KeysValues {
            kv_heads: 32,
            head_dim: 128,
        },
    },
    ModelCard {
        name: "Llama 3 8B",
        attention: "GQA",
        layers: 32,
        cached: Cached::KeysValues {
            kv_heads: 8,
            head_dim: 128,
        },
    },
    ModelCard {
        name: "Llama 3 70B",
        attention: "GQA",
        layers: 80,
        cached: Cached::KeysValues {
            kv_heads: 8,
            head_dim: 128,
        },
    },
    ModelCard {
        name: "Falcon 7B",
        attention: "MQA",
        layers: 32,
        cached: Cached::KeysValues {
            kv_heads: 1,
            head_dim: 64,
        },
    },
    ModelCard {
        name: "DeepSeek-V2",
        attention: "MLA",
        layers: 60,
        cached: Cached::Latent {
            latent_dim: 512,
            rope_dim: 64,
        },
    },
    ModelCard {
        name: "DeepSeek-V3",
        attention: "MLA",
        layers: 61,
        cached: Cached::Latent {
            latent_dim: 512,
            rope_dim: 64,
        },
    },
];
// ANCHOR_END: cards

impl ModelCard {
    /// Bytes one token adds to the cache, `bytes_per_value` per number (2 for bfloat16).
    ///
    /// # Shapes
    /// Scalars.
    pub fn bytes_per_token(&self, bytes_per_value: usize) -> u64 {
        match self.cached {
            Cached::KeysValues { kv_heads, head_dim } => {
                cache_bytes(self.layers, kv_heads, head_dim, 1, bytes_per_value)
            }
            Cached::Latent {
                latent_dim,
                rope_dim,
            } => mla_bytes_per_token(
                self.layers,
                latent_dim,
                rope_dim,
                bytes_per_value,
            ),
        }
    }

    /// What a layer caches per token: `(2 x kv_heads x head_dim)` or `(latent + rope)`.
    ///
    /// # Shapes
    /// Scalars.
    pub fn per_layer(&self) -> String {
        match self.cached {
            Cached::KeysValues { kv_heads, head_dim } => {
                format!("(2 x {kv_heads} x {head_dim})")
            }
            Cached::Latent {
                latent_dim,
                rope_dim,
            } => {
                format!("({latent_dim} + {rope_dim})")
            }
        }
    }
}
