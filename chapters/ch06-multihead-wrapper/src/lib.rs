//! # Chapter 6: multi-head attention by stacking heads
//!
//! One attention head learns one way of relating tokens. Multi-head attention runs several
//! heads side by side, each with its own query, key and value weights, and puts their
//! context vectors next to each other, so every token gets `heads × d_out` numbers that
//! mix what each head picked up. This is the multi-head attention of the Transformer
//! (Vaswani et al., 2017, "Attention Is All You Need", section 3.2.2), built here the plain
//! way, from separate heads:
//!
//! - [`wrapper`]: the blog post's `MultiHeadAttentionWrapper`, a list of chapter 5's causal
//!   heads whose outputs are concatenated along the last dim;
//! - [`stacked`]: Raschka's article's version, the heads' weights stacked into one tensor and every
//!   head projected at once with a batched matrix product (`bmm`).
//!
//! Both run the heads one after another; chapter 7 computes all of them with one projection.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod answers;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/one_big_head.rs")]
pub mod one_big_head;
#[cfg_attr(feature = "exercise", path = "../exercises/stacked.rs")]
pub mod stacked;
pub mod wrapper;
