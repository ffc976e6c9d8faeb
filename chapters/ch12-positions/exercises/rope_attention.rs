//! Exercise: put RoPE into chapter 7's multi-head attention. Replace the `todo!()`; test
//! with `cargo test -p ch12-positions --features exercise rope_attention_scores`.

use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::Tensor;

/// The scaled scores `q·kᵀ/√head_dim` of every head of `attn`, its queries and keys turned
/// by RoPE (half-split pairs) at `positions`.
///
/// # Shapes
/// `x`: `[batch, tokens, d_in]`, `positions`: `[tokens]`.
/// Returns `[batch, num_heads, tokens, tokens]`.
pub fn rope_attention_scores(
    attn: &MultiHeadAttention,
    x: &Tensor,
    positions: &Tensor,
    base: f32,
) -> Tensor {
    // TODO: follow chapter 7's forward pass up to the scores, and decide where the
    // rotation goes: on which of q, k, v, and before or after the split into heads?
    // `crate::at_positions::rope_at` rotates at the positions you give it.
    let _ = (attn, x, positions, base);
    todo!("rope_attention_scores")
}
