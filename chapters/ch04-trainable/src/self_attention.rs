//! Self-attention as a module that owns its three projections.
//!
//! Two versions of the same thing, as in the blog post:
//! - [`SelfAttentionV1`] keeps the projections as raw `[d_in, d_out]` parameter matrices and
//!   projects with `x · W`;
//! - [`SelfAttentionV2`] uses `nn.Linear` layers, which store `[d_out, d_in]` weights and
//!   compute `x · Wᵀ`. `Linear` also initialises its weights in a range scaled to `d_in`,
//!   which trains better than `randn`.
//!
//! The two compute the same function: V1 with the matrices `Wᵀ` equals V2 with `W`.
//! Their forward passes are in [`crate::forward`].

use shared::nn::Linear;
use shared::{Tensor, randn};

/// Self-attention with raw parameter matrices (the article's `SelfAttentionv1`).
#[derive(Clone, Debug)]
// ANCHOR: self_attention_v1
pub struct SelfAttentionV1 {
    /// `[d_in, d_out]`: projects a token into its query.
    pub w_query: Tensor,
    /// `[d_in, d_out]`: projects a token into its key.
    pub w_key: Tensor,
    /// `[d_in, d_out]`: projects a token into its value.
    pub w_value: Tensor,
}

impl SelfAttentionV1 {
    /// Draws the three matrices from N(0, 1) with this thread's generator, in the
    /// order query, key, value (the order decides which random numbers each one
    /// gets).
    ///
    /// # Shapes
    /// `w_query`, `w_key`, `w_value`: `[d_in, d_out]`.
    pub fn new(d_in: usize, d_out: usize) -> SelfAttentionV1 {
        let w_query = randn(&[d_in, d_out]);
        let w_key = randn(&[d_in, d_out]);
        let w_value = randn(&[d_in, d_out]);
        SelfAttentionV1 {
            w_query,
            w_key,
            w_value,
        }
    }
}
// ANCHOR_END: self_attention_v1

/// Self-attention with `nn.Linear` projections (the article's `SelfAttention_v2`).
#[derive(Clone, Debug)]
// ANCHOR: self_attention_v2
pub struct SelfAttentionV2 {
    /// `Linear(d_in, d_out)`: weight `[d_out, d_in]`, query = `x · Wᵀ (+ b)`.
    pub w_query: Linear,
    /// `Linear(d_in, d_out)`: key = `x · Wᵀ (+ b)`.
    pub w_key: Linear,
    /// `Linear(d_in, d_out)`: value = `x · Wᵀ (+ b)`.
    pub w_value: Linear,
}

impl SelfAttentionV2 {
    /// Creates the three layers in the order query, key, value, each initialised as
    /// PyTorch initialises `nn.Linear(d_in, d_out, bias=qkv_bias)`.
    ///
    /// # Shapes
    /// Each layer's weight: `[d_out, d_in]`; bias (with `qkv_bias`): `[d_out]`.
    pub fn new(d_in: usize, d_out: usize, qkv_bias: bool) -> SelfAttentionV2 {
        let w_query = Linear::new(d_in, d_out, qkv_bias);
        let w_key = Linear::new(d_in, d_out, qkv_bias);
        let w_value = Linear::new(d_in, d_out, qkv_bias);
        SelfAttentionV2 {
            w_query,
            w_key,
            w_value,
        }
    }
}
// ANCHOR_END: self_attention_v2
