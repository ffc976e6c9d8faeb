//! LayerNorm's backward.
//!
//! `y = x̂·w` with `x̂ = (x − μ)·r`, `r = 1/√(σ² + ε)`, over the `d` features of a row.
//! The weight's gradient is `Σ_rows g·x̂`. Every `x̂_j` depends on every `x_k` of its row
//! (through `μ` and `σ²`), so the input's gradient is not just `g·w·r`: with `ĝ = g·w`,
//! `∂L/∂x = r·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂))`. The two means remove what moving the whole
//! row, or stretching it, would change: LayerNorm's output cannot see either.

use shared::Tensor;
use shared::nn::LayerNorm;

use crate::backward::NormGrads;

/// The gradients of `norm.forward(x)` (a LayerNorm with a weight and no bias), given
/// `grad_y`.
///
/// # Shapes
/// `x`, `grad_y`: `[.., d]`; the norm's weight `[d]`. Returns the input's gradient in the
/// shape of `x` and the weight's `[d]`.
// ANCHOR: layer_norm_backward
pub fn layer_norm_backward(
    norm: &LayerNorm,
    x: &Tensor,
    grad_y: &Tensor,
) -> NormGrads {
    let w = norm.weight.as_ref().expect("a LayerNorm with a weight");
    let mean = x.mean_dim(-1, true);
    let centered = x - &mean;
    let variance = (&centered * &centered).mean_dim(-1, true);
    let r = 1.0 / (variance + norm.eps as f32).sqrt(); // 1/√(σ² + ε), one per row
    let x_hat = &centered * &r;
    let g_hat = grad_y * w; // the gradient of x̂
    let shift = g_hat.mean_dim(-1, true); // what moving the row would change
    let stretch = (&g_hat * &x_hat).mean_dim(-1, true); // what stretching it would
    let input = &(&(&g_hat - &shift) - &(&x_hat * &stretch)) * &r;
    let weight = (grad_y * &x_hat).flatten(0, -2).sum_dim(0, false);
    NormGrads { input, weight }
}
// ANCHOR_END: layer_norm_backward
