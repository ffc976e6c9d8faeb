//! The blog post's `MultiHeadAttentionWrapper`: several causal heads side by side.
//!
//! The simplest multi-head attention: make `num_heads` independent copies of chapter 5's
//! `CausalAttention` (each draws its own weights), run every head on the same input, and
//! concatenate their context vectors along the feature dim. With `num_heads` heads of
//! `d_out` features each, every token ends up with `num_heads · d_out` features. The heads
//! run one after another; chapter 7 computes them together.
//!
//! The forward pass is in `wrapper_forward.rs`, one of the exercises.

use ch05_causal::CausalAttention;

#[cfg_attr(feature = "exercise", path = "../../exercises/wrapper_forward.rs")]
mod forward;

/// `num_heads` causal attention heads whose outputs are concatenated.
// ANCHOR: wrapper
#[derive(Clone, Debug)]
pub struct MultiHeadAttentionWrapper {
    /// The heads, in the order their outputs are concatenated.
    pub heads: Vec<CausalAttention>,
}

impl MultiHeadAttentionWrapper {
    /// `MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads,
    /// qkv_bias)`: creates the heads one after another, so head 0 draws its weights
    /// from the generator first, exactly as PyTorch's `nn.ModuleList` comprehension
    /// does. `d_out` is the size of one head.
    ///
    /// # Shapes
    /// Each head maps `[batch, tokens, d_in]` to `[batch, tokens, d_out]`; `tokens <=
    /// context_length`.
    pub fn new(
        d_in: usize,
        d_out: usize,
        context_length: usize,
        dropout: f64,
        num_heads: usize,
        qkv_bias: bool,
    ) -> MultiHeadAttentionWrapper {
        let heads = (0..num_heads)
            .map(|_| {
                // Each head draws its own weights as it is created.
                CausalAttention::new(d_in, d_out, context_length, dropout, qkv_bias)
            })
            .collect();
        MultiHeadAttentionWrapper { heads }
    }
}
// ANCHOR_END: wrapper
