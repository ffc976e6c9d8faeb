//! The backward of `Linear` (an exercise): see [`crate::linear`].

use shared::Tensor;
use shared::nn::Linear;

use crate::linear::LinearGrads;

/// The gradients of `y = layer.forward(x)`, given `grad_y`: of the weight
/// (`grad_y2ᵀ·x2`), of the bias (`grad_y2.sum(0)`) and of `x` (`grad_y2·W`), where `x2` and
/// `grad_y2` are `x` and `grad_y` with their leading dims flattened into rows.
///
/// The products are taken on the operands PyTorch's `addmm`/`mm` backward uses, and the
/// bias's column sum in PyTorch's order, so the gradients have autograd's bits.
///
/// # Shapes
/// `x`: `[.., in_features]`, `grad_y`: `[.., out_features]` with the same leading dims.
/// Returns `weight`: `[out_features, in_features]`, `bias`: `[out_features]`, `input`: the
/// shape of `x`.
///
/// # Panics
/// If the shapes do not fit the layer.
// ANCHOR: linear_backward
pub fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads {
    // Every leading dim is a row of tokens: [.., d] -> [T, d].
    let x2 = x.flatten(0, -2); // [T, d_in]
    let g2 = grad_y.flatten(0, -2); // [T, d_out]
    LinearGrads {
        weight: g2.t().matmul(&x2),
        bias: layer.bias.as_ref().map(|_| g2.sum_dim(0, false)),
        input: g2.matmul(&layer.weight).reshape(x.sizes()),
    }
}
// ANCHOR_END: linear_backward
