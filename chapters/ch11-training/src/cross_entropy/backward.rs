//! The backward pass of [`cross_entropy`](super::cross_entropy), kept in its own file
//! because it is an exercise.

use shared::Tensor;
use shared::exact::expf_u10;

/// The gradient of the mean cross-entropy with respect to the logits:
/// `(softmax(z) − onehot(t)) / rows`, row by row.
///
/// Computed as PyTorch's `log_softmax` backward computes it, so the bits agree: the loss
/// sends `c = −1/rows` to the target's log-probability, and every entry becomes
/// `fma(−exp(log p), c, onehot · c)` with one rounding (`exp` is the same SLEEF
/// `expf_u10` PyTorch's kernel uses).
///
/// # Shapes
/// `log_probs`: `[rows, classes]` (from [`cross_entropy`](super::cross_entropy)),
/// `targets`: `[rows]`. Returns `[rows, classes]`.
// ANCHOR: cross_entropy_backward
pub fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
    let (rows, classes) = (log_probs.size(0), log_probs.size(1));
    let c = -(1.0 / rows as f32);
    let mut grad = log_probs.to_vec();
    for (row, target) in targets.to_vec().into_iter().enumerate() {
        for class in 0..classes {
            let onehot = if class == target as usize { c } else { 0.0 };
            let entry = &mut grad[row * classes + class];
            // softmax · (−c) + onehot · c = (p − onehot) / rows
            *entry = (-expf_u10(*entry)).mul_add(c, onehot);
        }
    }
    Tensor::from_vec(grad, &[rows, classes])
}
// ANCHOR_END: cross_entropy_backward
