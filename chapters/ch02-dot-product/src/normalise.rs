//! From scores to weights: the weights of a weighted sum should be positive and add up to
//! 1, so that the result stays on the scale of the inputs and the weights read as shares.
//!
//! Dividing by the sum is the first idea, and it does make the weights add up to 1. But it
//! keeps negative scores negative, and a sum near zero blows every weight up. Softmax,
//! `exp(s_i) / Σ_j exp(s_j)`, makes every weight positive first and stretches the gaps
//! between scores, so the best match stands out more; the weights in this chapter come from
//! [`shared::Tensor::softmax`], and chapter 3 writes softmax by hand.

use shared::Tensor;

/// Divides every score by the sum of all scores, so the results add up to 1.
///
/// # Shapes
/// `scores`: any shape (here `[n]`). Returns the same shape.
// ANCHOR: normalise_by_sum
pub fn normalise_by_sum(scores: &Tensor) -> Tensor {
    scores / &scores.sum()
}
// ANCHOR_END: normalise_by_sum
