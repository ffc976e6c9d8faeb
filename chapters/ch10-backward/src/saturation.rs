//! How small the gradient of the scores gets when softmax saturates (an exercise).
//!
//! Scores that are too large (multiplied by 10, or never divided by `√d_k`) make a row of
//! weights nearly one-hot. Row by row, `dS_i = p_i (dP_i − D)` with `D = Σ_j p_j dP_j`, a
//! weighted mean of the `dP_j` in which `dP_i` itself has weight `p_i`; so
//! `|dP_i − D| = |Σ_{j≠i} p_j (dP_i − dP_j)| ≤ (1 − p_i) · 2M` when every `|dP_j| ≤ M`.
//! Summed over the row: `Σ_i |dS_i| ≤ 2M Σ_i p_i (1 − p_i) = 2M (1 − Σ_i p_i²)`, which
//! is 0 for a one-hot row. A saturated softmax passes almost no gradient back to its
//! scores, the reason chapter 4 divides them by `√d_k`.

/// An upper bound on `Σ_i |dS_i|` for one row of weights `weights` and any gradient of
/// the weights whose entries lie in `[-max_abs_grad, max_abs_grad]`: `2M (1 − Σ p_i²)`.
///
/// # Shapes
/// `weights`: one row of softmax weights (they sum to 1).
// ANCHOR: score_grad_bound
pub fn score_grad_bound(weights: &[f32], max_abs_grad: f32) -> f32 {
    let sum_of_squares: f32 = weights.iter().map(|p| p * p).sum();
    2.0 * max_abs_grad * (1.0 - sum_of_squares)
}
// ANCHOR_END: score_grad_bound
