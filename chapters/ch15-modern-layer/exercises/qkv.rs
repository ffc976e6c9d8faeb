//! Exercise: where RoPE goes. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise qkv`.

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
    pub fn qkv(
        &self,
        x: &Tensor,
        positions: &[usize],
        recipe: &Recipe,
    ) -> (Tensor, Tensor, Tensor) {
        // TODO: the queries, keys and values of every head, the queries and keys normalised
        // per head (if the recipe says so and the layer has QK-norm) and turned by RoPE at
        // the tokens' positions in the whole text. Which of the three is left unturned, and
        // why normalise first?
        let _ = (x, positions, recipe, split_heads, apply_rope, rope_tables);
        todo!("qkv")
    }
}
