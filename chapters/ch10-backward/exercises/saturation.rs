//! Exercise (derive): how small can the gradient of the scores be when softmax
//! saturates? Replace the `todo!()`; test with `cargo test -p ch10-backward --features
//! exercise score_grad_bound`.

/// An upper bound on `Σ_i |dS_i|` for one row of weights `weights` and any gradient of
/// the weights whose entries lie in `[-max_abs_grad, max_abs_grad]`; it must be 0 for a
/// one-hot row.
///
/// # Shapes
/// `weights`: one row of softmax weights (they sum to 1).
pub fn score_grad_bound(weights: &[f32], max_abs_grad: f32) -> f32 {
    // TODO: start from dS_i = p_i (dP_i − Σ_j p_j dP_j) and bound each term.
    let _ = (weights, max_abs_grad);
    todo!("score_grad_bound")
}
