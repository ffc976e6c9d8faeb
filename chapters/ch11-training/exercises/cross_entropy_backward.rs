//! Exercise: the gradient of cross-entropy with respect to the logits. Replace the
//! `todo!()`; test with `cargo test -p ch11-training --features exercise cross_entropy_backward`.

use shared::Tensor;

/// The gradient of the mean cross-entropy with respect to the logits:
/// `(softmax(z) − onehot(t)) / rows`, row by row.
///
/// # Shapes
/// `log_probs`: `[rows, classes]`, `targets`: `[rows]`. Returns `[rows, classes]`.
pub fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
    // TODO: the probabilities are exp(log p); subtract 1 at each row's target and divide
    // everything by the number of rows.
    let _ = (log_probs, targets);
    todo!("cross_entropy_backward")
}
