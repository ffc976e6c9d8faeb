//! Exercise: the forward pass of Raschka's `MultiHeadAttention`. Replace the `todo!()`;
//! test with `cargo test -p ch07-multihead-split --features exercise multihead_forward`.
//! It uses your `split_heads` and `merge_heads`, so write those first.

use shared::Tensor;

use crate::multihead::MultiHeadAttention;

impl MultiHeadAttention {
    /// Causal multi-head attention: project, split into heads, causal attention in every
    /// head at once, merge the heads, `out_proj`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]`. Returns `[batch, tokens, d_out]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: project x with w_query, w_key and w_value and split each into heads (with
        // `crate::heads::split_heads`; add the `use`); compute the scores queries·keysᵀ
        // (transpose the last two dims); hide the future: -inf where the first `tokens`
        // rows and columns of self.mask are true; softmax of scores / √head_dim over the
        // last dim, then self.dropout; multiply by the values, merge the heads
        // (`crate::heads::merge_heads`) and apply out_proj.
        let _ = x;
        todo!("MultiHeadAttention::forward")
    }
}
