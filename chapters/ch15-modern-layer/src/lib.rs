//! # Chapter 15: the decoder layer of a 2026 open model
//!
//! GPT-2's block (chapter 13) normalises with LayerNorm, adds learned positions to the
//! tokens and feeds a GELU network. The layers of today's open models (Llama 3, Qwen3,
//! Gemma 3, gpt-oss) keep its shape, a residual stream with attention and a feed-forward
//! network each reading a normalised copy, and swap the pieces: RMSNorm (Zhang and
//! Sennrich, 2019), rotary positions on the queries and keys inside every head (Su et al.,
//! 2021, "RoFormer"), grouped-query attention (chapter 14), a normalised query and key
//! per head (QK-norm), capped scores (Gemma 2), a learned sink logit per head (gpt-oss),
//! windowed and full layers in a fixed pattern, and a gated feed-forward network (SwiGLU,
//! Shazeer, 2020, "GLU Variants Improve Transformer").
//!
//! - [`recipe`]: the switches: which pieces a layer uses;
//! - [`rope`]: the rotary tables (base θ, Llama 3.1's scaling) and their application;
//!   [`rope_order`]: when QK-norm and RoPE may change places;
//! - [`softcap`] and [`sinks`]: two changes to the softmax's input;
//! - [`attention`] and `qkv`: the attention of one layer, whole-sequence and one cached
//!   token, and StreamingLLM's first tokens kept beside a local layer's window;
//! - [`gate`]: Qwen3-Next's output gate;
//! - [`swiglu`]: the feed-forward network;
//! - [`layer`] and [`model`]: the layer with its residuals, a tiny model of them, greedy
//!   decoding with a KV cache of rotated keys;
//! - [`row_by_row`]: the batch-invariant twins of the forward passes, every product one
//!   token at a time, beside the formulas;
//! - [`cache_size`]: the KV cache of a recipe card, local layers capped by their window;
//! - [`moe`]: a mixture of experts, the feed-forward network of gpt-oss, Qwen3's MoE
//!   models, Qwen3-Next and DeepSeek-V3, with Qwen3's and DeepSeek-V3's routers;
//! - [`sampling`] and [`top_p`]: what happens to the logits before a token is drawn;
//!   [`model::generate_sampled`] draws it;
//! - [`setup`]: the chapter's model sizes, prompt, the recipes and the samplers it compares.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod attention;
#[cfg_attr(feature = "exercise", path = "../exercises/cache_size.rs")]
pub mod cache_size;
pub mod gate;
pub mod layer;
pub mod model;
pub mod moe;
pub mod narrative;
pub mod recipe;
pub mod rope;
#[cfg_attr(feature = "exercise", path = "../exercises/rope_order.rs")]
pub mod rope_order;
pub mod row_by_row;
pub mod sampling;
pub mod setup;
#[cfg_attr(feature = "exercise", path = "../exercises/sinks.rs")]
pub mod sinks;
pub mod softcap;
pub mod swiglu;
#[cfg_attr(feature = "exercise", path = "../exercises/top_p.rs")]
pub mod top_p;

pub use attention::Attention;
pub use layer::Layer;
pub use model::{ModelConfig, TinyModel};
pub use recipe::Recipe;
