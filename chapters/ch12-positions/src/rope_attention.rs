//! RoPE inside chapter 7's multi-head attention, kept in its own file because it is an
//! exercise.
//!
//! RoPE goes where the positions matter: on the queries and keys of every head, after the
//! split into heads and before their scores. The values are left alone.

use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::Tensor;

use crate::at_positions::rope_at;

/// The scaled scores `q·kᵀ/√head_dim` of every head of `attn`, its queries and keys turned
/// by RoPE (half-split pairs) at `positions`: the scores chapter 7's attention would take
/// its softmax of, with RoPE added.
///
/// # Shapes
/// `x`: `[batch, tokens, d_in]`, `positions`: `[tokens]`.
/// Returns `[batch, num_heads, tokens, tokens]`.
// ANCHOR: rope_attention_scores
pub fn rope_attention_scores(
    attn: &MultiHeadAttention,
    x: &Tensor,
    positions: &Tensor,
    base: f32,
) -> Tensor {
    let q = split_heads(&attn.w_query.forward(x), attn.num_heads); // [b, h, t, hd]
    let k = split_heads(&attn.w_key.forward(x), attn.num_heads);
    let (q, k) = (rope_at(&q, positions, base), rope_at(&k, positions, base));
    q.matmul(&k.transpose(-2, -1)) / (attn.head_dim as f32).sqrt()
}
// ANCHOR_END: rope_attention_scores
