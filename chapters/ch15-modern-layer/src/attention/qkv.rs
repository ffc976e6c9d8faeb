//! Queries, keys and values of a 2026 layer, kept in its own file because it is an
//! exercise: where RoPE goes.

use ch07_multihead_split::heads::split_heads;
use shared::Tensor;

use crate::attention::Attention;
use crate::recipe::Recipe;
use crate::rope::{apply_rope, rope_tables};

impl Attention {
    /// Queries, keys and values of tokens at `positions`: projected, split into heads,
    /// QK-normed (if the recipe says so and the layer has QK-norm), the queries and keys
    /// turned by RoPE.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`, `positions`: `tokens` of them. Returns q
    /// `[batch, n_heads, tokens, head_dim]`, k and v `[batch, n_kv_heads, tokens, head_dim]`.
    // ANCHOR: qkv
    pub fn qkv(
        &self,
        x: &Tensor,
        positions: &[usize],
        recipe: &Recipe,
    ) -> (Tensor, Tensor, Tensor) {
        let mut q = split_heads(&self.w_query.forward(x), self.n_heads);
        let mut k = split_heads(&self.w_key.forward(x), self.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x), self.n_kv_heads);
        if let Some((q_norm, k_norm)) = &self.qk_norm
            && recipe.qk_norm
        {
            (q, k) = (q_norm.forward(&q), k_norm.forward(&k));
        }
        let (cos, sin) = rope_tables(
            positions,
            self.head_dim,
            recipe.theta,
            recipe.llama31_scaling,
        );
        (apply_rope(&q, &cos, &sin), apply_rope(&k, &cos, &sin), v)
    }
    // ANCHOR_END: qkv
}
