//! # Chapter 13: the transformer block
//!
//! Attention is one half of a transformer block. GPT-2 (Radford et al., 2019) wraps it,
//! and a small feed-forward network after it, in the same pattern: normalise each token's
//! vector, transform it, and add the result back to the vector it came from,
//! `x = x + attn(ln_1(x))`, then `x = x + mlp(ln_2(x))`. The running sum `x` is the
//! residual stream; every layer reads from it and writes a correction into it.
//!
//! The original Transformer (Vaswani et al., 2017, "Attention Is All You Need") uses
//! attention three times, each with its own mask: the encoder attends over its padded input
//! (padding mask), the decoder over its own past (causal and padding mask), and the decoder
//! over the encoder's output (the encoder's padding mask on the keys).
//!
//! - [`layer_norm`]: layer norm as the formula writes it, beside the block's `LayerNorm`;
//! - [`mlp`]: GPT-2's feed-forward network, `Linear(d, 4d)`, GELU (tanh form),
//!   `Linear(4d, d)`;
//! - [`block`]: the pre-norm `TransformerBlock` around chapter 7's attention, and the
//!   post-norm order of the original Transformer for comparison;
//! - [`depth`]: stacks of pre-norm or post-norm blocks, and the gradient that reaches their
//!   input;
//! - [`masks`]: padding masks from sequence lengths, and the masks of the three uses of
//!   attention, combined by broadcasting;
//! - [`masked_attention`]: attention weights under a mask, what a fully masked row gives,
//!   and the fixes;
//! - [`parameters`]: counting a block's parameters, and a whole model's, up to GPT-2 small
//!   and medium.
//!
//! With `--features exercise`, the modules marked in those files come from `exercises/`
//! instead, where the learner writes them.

pub mod block;
pub mod depth;
pub mod layer_norm;
pub mod masked_attention;
pub mod masks;
pub mod mlp;
pub mod narrative;
pub mod parameters;
