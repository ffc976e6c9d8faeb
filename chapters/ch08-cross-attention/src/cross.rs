//! Cross-attention with one head, as Raschka's article introduces it.
//!
//! Self-attention relates the tokens of one sequence to each other. Cross-attention
//! relates two sequences: the queries come from one (in a translation model, the words
//! generated so far), the keys and values from the other (the encoded source sentence).
//! Nothing else changes. The two sequences may have different lengths; only their
//! embedding size must match the weights. Each query gets one weight per token of the
//! *other* sequence, and its context vector is a mix of the other sequence's values.
//!
//! Raschka's article writes weights as `[d_out, d]` and multiplies `W·x`, so the keys of a whole
//! sequence are `(W_key·Xᵀ)ᵀ`, one row per token.

use shared::Tensor;

/// One query attends to another sequence: the keys and values of `other`
/// (`(W·otherᵀ)ᵀ`), scores `ω = query·Kᵀ`, weights `softmax(ω/√d_k)` over the tokens of
/// `other`, and the context vector `weights·V`. Returns `(weights, context)`.
///
/// # Shapes
/// `query`: `[d_k]` (already projected, from the first sequence), `other`: `[m, d]` (the
/// second sequence, any length `m`), `w_key`: `[d_k, d]`, `w_value`: `[d_v, d]`.
/// Returns `weights`: `[m]`, summing to 1, and `context`: `[d_v]`.
// ANCHOR: cross_attention
pub fn cross_attention(
    query: &Tensor,
    other: &Tensor,
    w_key: &Tensor,
    w_value: &Tensor,
) -> (Tensor, Tensor) {
    let keys = w_key.matmul(&other.t()).t(); // [m, d_k]
    let values = w_value.matmul(&other.t()).t(); // [m, d_v]
    let d_k = keys.size(-1) as f32;
    let omega = query.matmul(&keys.t()); // [m]: one score per token of `other`
    let weights = (&omega / d_k.sqrt()).softmax(0);
    let context = weights.matmul(&values); // [d_v]
    (weights, context)
}
// ANCHOR_END: cross_attention
