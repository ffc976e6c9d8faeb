//! # Chapter 16: FlexAttention
//!
//! Almost every attention variant of the last years changes one of two things: a score,
//! or which keys a query may see. ALiBi adds a distance penalty to every score, Gemma 2
//! caps the scores, a sliding window hides the keys that are too old, a document mask
//! keeps packed sequences apart, a prefix-LM lets a prompt see itself both ways. PyTorch's
//! FlexAttention (the PyTorch team's blog post "FlexAttention: The Flexibility of PyTorch
//! with the Performance of FlashAttention", 2024) turns that observation into an
//! interface: the user writes a `score_mod(score, b, h, q_idx, kv_idx)` and a
//! `mask_mod(b, h, q_idx, kv_idx)`, and one kernel runs them all. Before running, the mask
//! is summarised once per tile of queries and keys: a tile nobody sees is never loaded, a
//! tile everybody sees needs no mask. Training through a recipe needs one more thing, the
//! derivative of its score_mod, and chapter 10's backward pass does the rest.
//!
//! - [`recipes`]: the mask_mods and score_mods, each a few lines;
//! - [`formula`]: `softmax(mask(score_mod(q·kᵀ·scale)))·v` with tensor operations, the
//!   definition everything else is checked against;
//! - [`block_mask`]: every tile full, partial or empty, computed once from a mask_mod,
//!   and the tiles a tile of queries visits;
//! - [`kernel`]: the tiled kernel, generic over the two functions, that visits only the
//!   tiles the block mask keeps, reading the keys and values row by row through
//!   [`kv_rows`] (so that chapter 17 can run it on a paged cache); [`kernel_io`]: what it
//!   takes and gives;
//! - [`backward`]: the gradients of `q`, `k`, `v` through a score_mod, for training, and
//!   [`pytorch_order`], the same with softmax's backward in PyTorch's order of additions;
//! - [`kernel_backward`]: the tiled kernel's backward, chapter 9's FlashAttention
//!   backward with the score_mod's backward, skipping the empty tiles;
//! - [`alibi`], [`chunked`], [`empty_tiles`], [`softcap_grad`]: the exercises;
//! - [`setup`]: the sizes of the chapter's inputs, tiles and recipes.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

#[cfg_attr(feature = "exercise", path = "../exercises/alibi.rs")]
pub mod alibi;
pub mod backward;
pub mod block_mask;
#[cfg_attr(feature = "exercise", path = "../exercises/chunked.rs")]
pub mod chunked;
#[cfg_attr(feature = "exercise", path = "../exercises/empty_tiles.rs")]
pub mod empty_tiles;
pub mod formula;
pub mod kernel;
pub mod kernel_backward;
pub mod kernel_io;
pub mod kv_rows;
pub mod narrative;
pub mod pytorch_order;
pub mod recipes;
pub mod setup;
#[cfg_attr(feature = "exercise", path = "../exercises/softcap_grad.rs")]
pub mod softcap_grad;
