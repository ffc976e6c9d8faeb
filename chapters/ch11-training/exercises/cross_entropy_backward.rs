//! Exercise: the gradient of cross-entropy with respect to the logits. Replace the
//! `todo!()`; test with `cargo test -p ch11-training --features exercise cross_entropy_backward`.

use shared::Tensor;
#[allow(unused_imports)]
use shared::exact::expf_u10;

/// The gradient of the mean cross-entropy with respect to the logits:
/// `(softmax(z) − onehot(t)) / rows`, row by row, as PyTorch computes it.
///
/// # Shapes
/// `log_probs`: `[rows, classes]`, `targets`: `[rows]`. Returns `[rows, classes]`.
pub fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
    // TODO: with c = −1/rows, every entry is fma(−exp(log p), c, onehot · c), where
    // onehot is 1 at the row's target and 0 elsewhere.
    let _ = (log_probs, targets);
    todo!("cross_entropy_backward")
}
