//! Exercise: Raschka's article's heads stacked in one tensor. Replace each `todo!()`; test with
//! `cargo test -p ch06-multihead-wrapper --features exercise project_heads` (and
//! `head_contexts`).

use shared::Tensor;

/// The keys (or values, or queries) of every token in every head, one row per token.
///
/// # Shapes
/// `w`: `[heads, d_out, d]`, `x`: `[tokens, d]`. Returns `[heads, tokens, d_out]`.
pub fn project_heads(w: &Tensor, x: &Tensor) -> Tensor {
    // TODO: stack xᵀ once per head (repeat), multiply each head's weight by it with one
    // batched matrix product (bmm), then swap the last two dims (permute) so each head
    // has one row per token.
    let _ = (w, x);
    todo!("project_heads")
}

/// Each head's context vector for one query token, stacked.
///
/// # Shapes
/// `queries`: `[heads, d_k]`, `keys`: `[heads, tokens, d_k]`, `values`: `[heads, tokens, d_v]`.
/// Returns `[heads, d_v]`.
pub fn head_contexts(queries: &Tensor, keys: &Tensor, values: &Tensor) -> Tensor {
    // TODO: for every head i, chapter 4's single-head step with queries[i], keys[i] and
    // values[i]: scores q·Kᵀ, weights softmax(scores / √d_k) over the tokens, context
    // weights·V. Stack the heads' context vectors.
    let _ = (queries, keys, values);
    todo!("head_contexts")
}
