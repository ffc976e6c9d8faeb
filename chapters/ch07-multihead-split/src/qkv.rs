//! Sum's multi-head attention: separate inputs for queries, keys and values.
//!
//! Raschka's module takes one sequence `x` and is always causal. Sum's takes three,
//! `q`, `k` and `v`, and an optional mask. With `q = k = v` it is self-attention; with
//! queries from one sequence and keys and values from another it is cross-attention
//! (chapter 8). Everything else is the same recipe: one projection per role split into
//! heads, scaled dot-product attention in every head, heads merged, an output projection.

use shared::Tensor;
use shared::nn::Linear;

use crate::heads::{merge_heads, split_heads};
use crate::scaled_dot_product::scaled_dot_product_attention;

/// Sum's `MultiHeadAttention`, renamed so it can live next to Raschka's
/// [`MultiHeadAttention`](crate::multihead::MultiHeadAttention) (the reference script
/// calls it `MultiHeadAttentionQKV`). All four projections have a bias.
// ANCHOR: qkv_struct
pub struct MultiHeadAttentionQkv {
    /// The features per head, `d_model / n_heads`.
    pub d_k: usize,
    /// The number of heads.
    pub n_heads: usize,
    /// `[d_model, d_model]`: projects the query inputs.
    pub w_q: Linear,
    /// `[d_model, d_model]`: projects the key inputs.
    pub w_k: Linear,
    /// `[d_model, d_model]`: projects the value inputs.
    pub w_v: Linear,
    /// `[d_model, d_model]`: mixes the merged heads.
    pub w_o: Linear,
}
// ANCHOR_END: qkv_struct

impl MultiHeadAttentionQkv {
    /// `MultiHeadAttention(d_model, n_heads)` of Sum's article: four `Linear(d_model, d_model)`
    /// drawn in the order `W_q`, `W_k`, `W_v`, `W_o`.
    ///
    /// # Panics
    /// If `d_model` is not divisible by `n_heads` (the article's `assert`).
    pub fn new(d_model: usize, n_heads: usize) -> MultiHeadAttentionQkv {
        assert!(
            n_heads > 0 && d_model.is_multiple_of(n_heads),
            "d_model must be divisible by n_heads"
        );
        MultiHeadAttentionQkv {
            d_k: d_model / n_heads,
            n_heads,
            w_q: Linear::new(d_model, d_model, true),
            w_k: Linear::new(d_model, d_model, true),
            w_v: Linear::new(d_model, d_model, true),
            w_o: Linear::new(d_model, d_model, true),
        }
    }

    /// Multi-head attention of the queries `q` over the keys `k` and values `v`; `mask`
    /// (`true` = may attend) as in [`scaled_dot_product_attention`].
    ///
    /// # Shapes
    /// `q`: `[batch, queries, d_model]`, `k` and `v`: `[batch, keys, d_model]`; `mask`
    /// broadcasts to `[batch, n_heads, queries, keys]`. Returns `[batch, queries, d_model]`.
    // ANCHOR: qkv_forward
    pub fn forward(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: Option<&Tensor<bool>>,
    ) -> Tensor {
        let q = split_heads(&self.w_q.forward(q), self.n_heads);
        let k = split_heads(&self.w_k.forward(k), self.n_heads);
        let v = split_heads(&self.w_v.forward(v), self.n_heads);
        let (attn_out, _weights) = scaled_dot_product_attention(&q, &k, &v, mask);
        self.w_o.forward(&merge_heads(&attn_out))
    }
    // ANCHOR_END: qkv_forward
}
