//! RMSNorm's backward.
//!
//! `y = x̂·w` with `x̂ = x·r`, `r = 1/√(mean(x²) + ε)`: LayerNorm without the mean. The
//! weight's gradient is `Σ_rows g·x̂`; with `ĝ = g·w`, the input's gradient is
//! `r·(ĝ − x̂·mean(ĝ·x̂))`: only the stretch is removed, since RMSNorm's output does see a
//! shift of the row.

use shared::Tensor;
use shared::nn::RMSNorm;

use crate::backward::NormGrads;

/// The gradients of `norm.forward(x)` (an RMSNorm with a weight), given `grad_y`.
///
/// # Shapes
/// `x`, `grad_y`: `[.., d]`; the weight `[d]`. Returns the input's gradient in the shape
/// of `x` and the weight's `[d]`.
// ANCHOR: rms_norm_backward
pub fn rms_norm_backward(norm: &RMSNorm, x: &Tensor, grad_y: &Tensor) -> NormGrads {
    let w = norm.weight.as_ref().expect("an RMSNorm with a weight");
    let eps = norm.eps.map_or(f32::EPSILON, |e| e as f32);
    let r = 1.0 / ((x * x).mean_dim(-1, true) + eps).sqrt(); // one per row
    let x_hat = x * &r;
    let g_hat = grad_y * w;
    let stretch = (&g_hat * &x_hat).mean_dim(-1, true);
    let input = &(&g_hat - &(&x_hat * &stretch)) * &r;
    let weight = (grad_y * &x_hat).flatten(0, -2).sum_dim(0, false);
    NormGrads { input, weight }
}
// ANCHOR_END: rms_norm_backward
