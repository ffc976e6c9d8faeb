//! # Chapter 14: generation with a KV cache, grouped-query attention and sliding windows
//!
//! A decoder writes one token at a time: it reads the sequence so far, picks the most likely
//! next token (greedy decoding) and appends it. Recomputing the whole sequence for every
//! new token repeats almost all the work of the step before; a KV cache keeps the keys and
//! values of the earlier tokens (they never change under a causal mask), so each step
//! projects only the new token. Grouped-query attention (Ainslie et al., 2023, "GQA")
//! shrinks that cache by letting groups of query heads share one key/value head
//! (multi-query attention, Shazeer, 2019, shares one among all); a sliding window (as in
//! Mistral 7B) bounds it by keeping only the last `w` tokens.
//!
//! - [`gqa`]: key/value heads shared by groups of query heads (chapter 7's `repeat_kv`);
//! - [`window`]: the causal mask with an optional sliding window (chapter 5's masks);
//! - [`attention`]: grouped-query causal attention over a whole sequence;
//! - [`kv_cache`] and `decode_step`: the cache, and one decoding step that uses it;
//! - [`model`]: a tiny decoder-only model around that attention;
//! - [`generate`]: greedy decoding, recomputing and cached;
//! - [`row_by_row`]: the forward passes' batch-invariant twins, every product one query
//!   row at a time;
//! - [`padded`] and [`left_padding`]: prompts of different lengths decoded in one batch;
//! - [`cache_size`] and [`context_fit`]: the cache's size in bytes for real models, and
//!   the context a memory holds;
//! - [`digits`]: a float32 printed with all the digits that tell it from its neighbours;
//! - [`setup`]: the chapter's model sizes, prompt and window, and the real models it sizes.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod attention;
#[cfg_attr(feature = "exercise", path = "../exercises/cache_size.rs")]
pub mod cache_size;
#[cfg_attr(feature = "exercise", path = "../exercises/context_fit.rs")]
pub mod context_fit;
pub mod digits;
pub mod generate;
pub mod gqa;
pub mod kv_cache;
#[cfg_attr(feature = "exercise", path = "../exercises/left_padding.rs")]
pub mod left_padding;
pub mod model;
pub mod narrative;
pub mod padded;
pub mod row_by_row;
pub mod setup;
pub mod window;

pub use attention::GroupedQueryAttention;
pub use kv_cache::KvCache;
pub use model::{DecoderConfig, TinyDecoder};
