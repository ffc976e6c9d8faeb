//! Politi's multi-head attention, written with `einsum`.
//!
//! The weights of all heads live in one `[heads, d, d_k]` tensor (x·W convention: a token
//! row times a weight matrix). `einsum` names every dim with a letter, so one line says
//! "for every head, multiply the tokens by that head's matrix". The heads' outputs are
//! then put side by side per token and multiplied by an output matrix, as in the
//! Transformer paper.

use shared::{Tensor, einsum};

/// The queries (keys, values) of every token in every head:
/// `einsum('sd,hde->hse', x, w)`, i.e. `x·w[h]` for each head `h`.
///
/// # Shapes
/// `x`: `[seq, d]`, `w`: `[heads, d, d_k]`. Returns `[heads, seq, d_k]`.
// ANCHOR: einsum_project
pub fn einsum_project(x: &Tensor, w: &Tensor) -> Tensor {
    einsum("sd,hde->hse", x, w)
}
// ANCHOR_END: einsum_project

/// Every head's scaled scores, written as Politi's article writes them:
/// `einsum('hse,hek->hsk', queries, keysᵀ) / √d_k`.
///
/// # Shapes
/// `queries`, `keys`: `[heads, seq, d_k]`. Returns `[heads, seq, seq]`.
// ANCHOR: einsum_scores
pub fn einsum_scores(queries: &Tensor, keys: &Tensor) -> Tensor {
    let d_k = queries.size(-1) as f32;
    einsum("hse,hek->hsk", queries, &keys.transpose(-2, -1)) / d_k.sqrt()
}
// ANCHOR_END: einsum_scores

/// Every head's context vectors, `einsum('hij,hjk->hik', weights, values)`: row `i` of
/// head `h` is the weighted sum of that head's value rows.
///
/// # Shapes
/// `weights`: `[heads, seq, seq]`, `values`: `[heads, seq, d_k]`. Returns `[heads, seq, d_k]`.
// ANCHOR: einsum_head_outputs
pub fn einsum_head_outputs(weights: &Tensor, values: &Tensor) -> Tensor {
    einsum("hij,hjk->hik", weights, values)
}
// ANCHOR_END: einsum_head_outputs

/// The heads side by side for every token, `permute(1, 0, 2).reshape(seq, -1)`: token
/// `s` gets head 0's `d_k` numbers, then head 1's, and so on. (The permute leaves the
/// numbers where they are in memory, so this `reshape` copies them.)
///
/// # Shapes
/// `head_outputs`: `[heads, seq, d_k]`. Returns `[seq, heads · d_k]`.
// ANCHOR: concat_heads
pub fn concat_heads(head_outputs: &Tensor) -> Tensor {
    let [heads, seq, d_k] = head_outputs.dims();
    head_outputs.permute(&[1, 0, 2]).reshape([seq, heads * d_k])
}
// ANCHOR_END: concat_heads
