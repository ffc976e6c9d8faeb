//! The backward pass of [`cross_entropy`](super::cross_entropy), kept in its own file
//! because it is an exercise.

use shared::Tensor;

/// The gradient of the mean cross-entropy with respect to the logits:
/// `(softmax(z) − onehot(t)) / rows`, row by row. `exp(log_softmax(z))` is `softmax(z)`.
///
/// # Shapes
/// `log_probs`: `[rows, classes]` (from [`cross_entropy`](super::cross_entropy)),
/// `targets`: `[rows]`. Returns `[rows, classes]`.
// ANCHOR: cross_entropy_backward
pub fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
    let (rows, classes) = (log_probs.size(0), log_probs.size(1));
    let probs = log_probs.exp(); // softmax(z)
    let mut one_hot = vec![0.0; rows * classes];
    for (row, target) in targets.to_vec().into_iter().enumerate() {
        one_hot[row * classes + target as usize] = 1.0;
    }
    let one_hot = Tensor::from_vec(one_hot, &[rows, classes]);
    &(&probs - &one_hot) / rows as f32
}
// ANCHOR_END: cross_entropy_backward
