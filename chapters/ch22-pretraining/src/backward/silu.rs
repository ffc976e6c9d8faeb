//! SiLU's backward.
//!
//! `silu(x) = x·s` with `s = sigmoid(x)`, and `s' = s·(1 − s)`, so
//! `dsilu/dx = s + x·s·(1 − s) = s·(1 + x·(1 − s))`.

use shared::Tensor;

/// `dsilu/dx` at `x`.
// ANCHOR: silu_derivative
pub fn silu_derivative(x: f32) -> f32 {
    let s = 1.0 / (1.0 + (-x).exp());
    s * (1.0 + x * (1.0 - s))
}
// ANCHOR_END: silu_derivative

/// The gradient of `x.silu()` given `grad_y`: `grad_y · dsilu/dx`.
///
/// # Shapes
/// `x`, `grad_y`: the same shape. Returns it.
// ANCHOR: silu_backward
pub fn silu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
    let slopes: Vec<f32> = x.to_vec().into_iter().map(silu_derivative).collect();
    grad_y * &Tensor::from_vec(slopes, x.sizes())
}
// ANCHOR_END: silu_backward
