//! The forward pass of [`MultiHeadAttention`], kept in its own file because it is an
//! exercise.

use shared::Tensor;

use crate::heads::{merge_heads, split_heads};
use crate::multihead::MultiHeadAttention;

impl MultiHeadAttention {
    /// Causal multi-head attention: project, split into heads, causal attention in every
    /// head at once, merge the heads, `out_proj`.
    ///
    /// The article writes `values.tranpose(1,2)` and `self.mask_bool()[...]`; neither
    /// method exists, so its code stops with an `AttributeError`. Fixed here as in
    /// Raschka's book: a real `transpose` (inside `split_heads`) and the module's boolean
    /// `mask` buffer.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]` with `tokens <= context_length`.
    /// Returns `[batch, tokens, d_out]`.
    // ANCHOR: multihead_forward
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let num_tokens = x.size(1);
        // [b, tokens, d_out] -> [b, heads, tokens, head_dim]
        let keys = split_heads(&self.w_key.forward(x), self.num_heads);
        let queries = split_heads(&self.w_query.forward(x), self.num_heads);
        let values = split_heads(&self.w_value.forward(x), self.num_heads);

        // One [tokens, tokens] score matrix per batch entry and head.
        let mut attn_scores = queries.matmul(&keys.transpose(2, 3));
        let mask_bool = self.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
        attn_scores.masked_fill_(&mask_bool, f32::NEG_INFINITY);
        let scale = (keys.size(-1) as f32).sqrt();
        let attn_weights = self.dropout.forward(&(&attn_scores / scale).softmax(-1));

        // [b, heads, tokens, head_dim] -> [b, tokens, d_out], then mix the heads.
        let context_vec = merge_heads(&attn_weights.matmul(&values));
        self.out_proj.forward(&context_vec)
    }
    // ANCHOR_END: multihead_forward
}
