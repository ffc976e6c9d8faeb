//! GELU's backward, for its tanh form.
//!
//! `y = ½·x·(1 + t)` with `t = tanh(u)`, `u = β·(x + κ·x³)`, `β = √(2/π)`, `κ = 0.044715`.
//! By the product rule, `dy/dx = ½·(1 + t) + ½·x·(1 − t²)·β·(1 + 3κ·x²)`: the first term
//! is the gate `½(1 + t)` itself, the second how fast the gate opens.

use shared::Tensor;

/// `β = √(2/π)`, as PyTorch rounds it.
pub const BETA: f32 = 0.797_884_6;
/// `κ`, the weight of the cube.
pub const KAPPA: f32 = 0.044_715;

/// `dy/dx` of the tanh GELU at `x`.
// ANCHOR: gelu_derivative
pub fn gelu_derivative(x: f32) -> f32 {
    let t = (BETA * (x + KAPPA * x * x * x)).tanh();
    let gate = 0.5 * (1.0 + t);
    let opening = 0.5 * x * (1.0 - t * t) * BETA * (1.0 + 3.0 * KAPPA * x * x);
    gate + opening
}
// ANCHOR_END: gelu_derivative

/// The gradient of `x.gelu(GeluApproximate::Tanh)` given `grad_y`: `grad_y · dy/dx`.
///
/// # Shapes
/// `x`, `grad_y`: the same shape. Returns it.
// ANCHOR: gelu_backward
pub fn gelu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
    let slopes: Vec<f32> = x.to_vec().into_iter().map(gelu_derivative).collect();
    grad_y * &Tensor::from_vec(slopes, x.sizes())
}
// ANCHOR_END: gelu_backward
