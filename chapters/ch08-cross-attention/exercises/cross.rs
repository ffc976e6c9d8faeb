//! Exercise: one query attends to another sequence. Replace the `todo!()`; test with
//! `cargo test -p ch08-cross-attention --features exercise cross_attention`.

use shared::Tensor;

/// One query attends to another sequence. Returns `(weights, context)`.
///
/// # Shapes
/// `query`: `[d_k]`, `other`: `[m, d]`, `w_key`: `[d_k, d]`, `w_value`: `[d_v, d]`.
/// Returns `weights`: `[m]` and `context`: `[d_v]`.
pub fn cross_attention(
    query: &Tensor,
    other: &Tensor,
    w_key: &Tensor,
    w_value: &Tensor,
) -> (Tensor, Tensor) {
    // TODO: compute the keys and values of `other` (Raschka's article multiplies W·xᵀ, then turns the
    // result back to one row per token), the scores of `query` against every key, the
    // weights softmax(scores / √d_k) over the tokens of `other`, and the context vector
    // weights·values.
    let _ = (query, other, w_key, w_value);
    todo!("cross_attention")
}
