//! The attention backward without storing `P` (an exercise): the forward keeps only each
//! query's log-sum-exp of its scores, one number per row instead of a row of `n` weights.
//!
//! The backward rebuilds `P` from the scores and that number. This is how FlashAttention's
//! backward (chapter 9) saves memory. No dropout here.

use ch05_causal::causal_mask;
use shared::Tensor;

#[cfg_attr(feature = "exercise", path = "../../exercises/recompute_backward.rs")]
mod backward;
pub use backward::backward_from_lse;

/// The scaled scores `Q·Kᵀ/√d`, with `-inf` above the diagonal when `causal`.
///
/// # Shapes
/// `queries`: `[.., n, d]`, `keys`: `[.., n, d]`. Returns `[.., n, n]`.
pub fn scaled_scores(queries: &Tensor, keys: &Tensor, causal: bool) -> Tensor {
    let scale = (queries.size(-1) as f32).sqrt();
    let scores = &queries.matmul(&keys.transpose(-2, -1)) / scale;
    if causal {
        scores.masked_fill(&causal_mask(queries.size(-2)), f32::NEG_INFINITY)
    } else {
        scores
    }
}

/// Attention forward that keeps, instead of `P`, the log-sum-exp of every row of scores:
/// returns `(out, lse)` with `out = softmax(S)·V` and `lse_i = log Σ_j exp(S_ij)`.
///
/// # Shapes
/// `queries`, `keys`: `[.., n, d]`, `values`: `[.., n, d_v]`. Returns `[.., n, d_v]` and
/// `[.., n, 1]`.
pub fn attention_forward_lse(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    causal: bool,
) -> (Tensor, Tensor) {
    let scores = scaled_scores(queries, keys, causal);
    let (max, _) = scores.max_dim(-1, true); // subtracted first, so exp cannot overflow
    let lse = &(&scores - &max).exp().sum_dim(-1, true).log() + &max;
    let weights = (&scores - &lse).exp();
    (weights.matmul(values), lse)
}
