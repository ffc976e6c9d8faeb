//! The backward of the split into heads and of the merge.
//!
//! Both only move numbers: `split_heads` is a `view` and a `transpose`, `merge_heads` a
//! `transpose`, a copy and a `view`. Every input element lands in exactly one output place,
//! so its gradient is the output gradient taken from that place: the backward of a move is
//! the opposite move. The backward of `split_heads` is `merge_heads`, and the other way
//! round.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use shared::Tensor;

/// The backward of `split_heads(x, num_heads)`: the heads' gradients side by side again.
///
/// # Shapes
/// `grad_heads`: `[batch, num_heads, tokens, head_dim]`. Returns `[batch, tokens,
/// num_heads · head_dim]`.
// ANCHOR: split_heads_backward
pub fn split_heads_backward(grad_heads: &Tensor) -> Tensor {
    merge_heads(grad_heads)
}
// ANCHOR_END: split_heads_backward

/// The backward of `merge_heads(x)`: the merged gradient cut into heads again.
///
/// # Shapes
/// `grad_merged`: `[batch, tokens, num_heads · head_dim]`. Returns `[batch, num_heads,
/// tokens, head_dim]`.
// ANCHOR: merge_heads_backward
pub fn merge_heads_backward(grad_merged: &Tensor, num_heads: usize) -> Tensor {
    split_heads(&grad_merged.contiguous(), num_heads)
}
// ANCHOR_END: merge_heads_backward
