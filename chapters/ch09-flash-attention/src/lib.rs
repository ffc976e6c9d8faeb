//! # Chapter 9: FlashAttention, attention in tiles
//!
//! Every chapter so far computed the whole `n × n` matrix of scores, then its softmax, then
//! the weighted sum of the values. For `n = 4096` tokens and 12 heads that matrix holds
//! 201 million numbers, and the time goes into writing it out and reading it back rather
//! than into arithmetic. FlashAttention (Dao et al., 2022, "FlashAttention: Fast and
//! Memory-Efficient Exact Attention with IO-Awareness") never builds it: the keys are read
//! in blocks, and the online softmax (Milakov and Gimelshein, 2018) keeps, for each query,
//! a running maximum and a running sum, rescaling what was accumulated whenever a larger
//! score arrives. The result is the same attention, exactly up to rounding, in `O(n·d)`
//! memory.
//!
//! - [`online`]: the online softmax of one row, block by block;
//! - [`blocks`]: which tiles a block of queries visits, and which the causal mask skips;
//! - [`tiled`]: the algorithm in tensor operations, digit for digit like PyTorch;
//! - [`exp`]: an `exp` the compiler can vectorise;
//! - [`kernel`]: the fast version, parallel over batch × heads × query blocks, written once
//!   over `shared`'s vector operations ([`shared::simd`]: AVX-512, AVX2 and any CPU);
//! - [`core`]: the kernel as a drop-in core of chapter 7's `MultiHeadAttention`;
//! - [`products`]: small matrix products in vector registers;
//! - [`backward`]: the backward pass in tiles, from the output and one log-sum-exp per
//!   query.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod backward;
pub mod blocks;
pub mod core;
#[cfg_attr(feature = "exercise", path = "../exercises/exp.rs")]
pub mod exp;
pub mod kernel;
#[cfg_attr(feature = "exercise", path = "../exercises/merge.rs")]
pub mod merge;
pub mod narrative;
pub mod online;
pub mod partial;
pub mod products;
#[cfg_attr(feature = "exercise", path = "../exercises/tiled.rs")]
pub mod tiled;
