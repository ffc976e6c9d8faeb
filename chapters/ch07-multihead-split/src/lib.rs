//! # Chapter 7: multi-head attention with weight splits
//!
//! Chapter 6 ran its heads one after another, each with its own small projections. The
//! multi-head attention of the Transformer (Vaswani et al., 2017, "Attention Is All You
//! Need", section 3.2.2) is computed in one go instead: one projection per role (query,
//! key, value) as wide as all heads together, its output cut into heads by a change of
//! shape, every head's attention in one batched matrix product, the heads put back side
//! by side, and an output projection that mixes them.
//!
//! - [`heads`]: the change of shape, `split_heads` and `merge_heads`;
//! - [`multihead`]: the blog post's causal `MultiHeadAttention`, with the
//!   article's two typos fixed;
//! - [`einsum_heads`]: Politi's version, every product written with `einsum`;
//! - [`scaled_dot_product`] and [`qkv`]: Sum's `scaled_dot_product_attention` (with
//!   an optional mask, returning the weights too) and its module with separate query,
//!   key and value inputs, ready for cross-attention in chapter 8.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod einsum_heads;
#[cfg_attr(feature = "exercise", path = "../exercises/grouped.rs")]
pub mod grouped;
#[cfg_attr(feature = "exercise", path = "../exercises/heads.rs")]
pub mod heads;
pub mod multihead;
pub mod narrative;
pub mod qkv;
#[cfg_attr(feature = "exercise", path = "../exercises/scaled_dot_product.rs")]
pub mod scaled_dot_product;
