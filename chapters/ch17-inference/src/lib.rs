//! # Chapter 17: attention at inference time
//!
//! Chapter 14 cached the keys and values of one sequence in one growing tensor; chapter
//! 15 decoded with a modern layer. A server answers many requests at once, and three
//! ideas shape how it spends memory and passes of the model:
//!
//! - a **paged KV cache** (Kwon et al., "Efficient Memory Management for Large Language
//!   Model Serving with PagedAttention"): fixed-size blocks from one pool and a block
//!   table per sequence, blocks shared between requests with a common prefix, and copied
//!   only when a shared block would change ([`paged`], [`block_table`],
//!   [`write_target`], [`paged_decode`]); attention that reads the keys and values
//!   through the block table inside chapter 16's tiled kernel ([`paged_attention`]), and
//!   split-KV decoding, one query over a long cache in parts merged by their
//!   log-sum-exps ([`key_range`], [`split_kv`]);
//! - **speculative decoding** (Leviathan et al., "Fast Inference from Transformers via
//!   Speculative Decoding"; Chen et al., "Accelerating Large Language Model Decoding
//!   with Speculative Sampling"): a small model drafts, the large one checks several
//!   tokens in one pass, greedy or sampling ([`speculative`], [`accepted`],
//!   [`speculative_sampling`], [`accept_or_replace`], [`target_pass`],
//!   [`expected_tokens`]);
//! - **multi-head latent attention's cache** (DeepSeek-AI, "DeepSeek-V2: A Strong,
//!   Economical, and Efficient Mixture-of-Experts Language Model"): a small latent and
//!   one shared RoPE key per token instead of a key and value per head, attended in
//!   two orders ([`mla`], [`absorbed_scores`], [`ledger`], [`mla_bytes`]).
//!
//! [`setup`] holds the chapter's sizes, requests and prompts.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

#[cfg_attr(feature = "exercise", path = "../exercises/absorbed_scores.rs")]
pub mod absorbed_scores;
#[cfg_attr(feature = "exercise", path = "../exercises/accept_or_replace.rs")]
pub mod accept_or_replace;
pub mod accepted;
pub mod block_table;
#[cfg_attr(feature = "exercise", path = "../exercises/expected_tokens.rs")]
pub mod expected_tokens;
pub mod key_range;
pub mod ledger;
pub mod mla;
#[cfg_attr(feature = "exercise", path = "../exercises/mla_bytes.rs")]
pub mod mla_bytes;
pub mod narrative;
pub mod paged;
pub mod paged_attention;
pub mod paged_decode;
pub mod setup;
pub mod speculative;
pub mod speculative_sampling;
pub mod split_kv;
pub mod target_pass;
pub mod write;
#[cfg_attr(feature = "exercise", path = "../exercises/write_target.rs")]
pub mod write_target;
