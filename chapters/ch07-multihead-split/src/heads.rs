//! Splitting one wide projection into heads, and putting the heads back together.
//!
//! Chapter 6 gave every head its own `d_in × head_dim` weights. Stack those weights and
//! they form one `d_in × (heads · head_dim)` weight: one projection computes the queries
//! of all heads at once, each head owning a slice of `head_dim` features. Splitting is then
//! only a change of shape, no arithmetic: `view` cuts the last dim into
//! `(heads, head_dim)`, and `transpose` moves the head dim in front of the tokens, so that
//! a batched matrix product works on each head's `[tokens, head_dim]` matrix.

use shared::Tensor;

/// Cuts the last dim into heads and puts the heads before the tokens: Raschka's
/// `x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)` (Sum's `split_heads`).
/// Head `i` gets features `i·head_dim .. (i+1)·head_dim` of every token.
///
/// # Shapes
/// `x`: `[batch, tokens, d_out]`, contiguous, with `d_out` divisible by `num_heads`.
/// Returns `[batch, num_heads, tokens, d_out / num_heads]` (a view).
// ANCHOR: split_heads
pub fn split_heads(x: &Tensor, num_heads: usize) -> Tensor {
    let [b, num_tokens, d_out] = x.dims();
    x.view([b, num_tokens, num_heads, d_out / num_heads])
        .transpose(1, 2)
}
// ANCHOR_END: split_heads

/// Undoes [`split_heads`]: tokens back in front of the heads, then each token's heads side
/// by side in one row, `transpose(1, 2).contiguous().view(b, num_tokens, d_out)`. The
/// `contiguous()` is needed because after the transpose the numbers of one token are no
/// longer next to each other in memory, and `view` only relabels memory.
///
/// # Shapes
/// `x`: `[batch, num_heads, tokens, head_dim]`. Returns `[batch, tokens, num_heads · head_dim]`.
// ANCHOR: merge_heads
pub fn merge_heads(x: &Tensor) -> Tensor {
    let [b, num_heads, num_tokens, head_dim] = x.dims();
    x.transpose(1, 2)
        .contiguous()
        .view([b, num_tokens, num_heads * head_dim])
}
// ANCHOR_END: merge_heads
