//! RMSNorm's backward: your code (see `exercises/hints.md`).

use shared::Tensor;
use shared::nn::RMSNorm;

use crate::backward::NormGrads;

/// The gradients of `norm.forward(x)` (an RMSNorm with a weight), given `grad_y`: the
/// input's and the weight's.
///
/// # Shapes
/// `x`, `grad_y`: `[.., d]`; the weight `[d]`. Returns the input's gradient in the shape
/// of `x` and the weight's `[d]`.
pub fn rms_norm_backward(norm: &RMSNorm, x: &Tensor, grad_y: &Tensor) -> NormGrads {
    // TODO: with y = x·r·w and r = 1/√(mean(x²) + ε) one number per row, derive how
    // the loss changes with each weight (summed over every row) and with each input
    // (remember that r depends on every input of its row), then compute both.
    let _ = (norm, x, grad_y);
    todo!("rms_norm_backward")
}
