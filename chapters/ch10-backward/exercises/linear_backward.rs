//! Exercise: `Linear`'s backward. Replace the `todo!()`; test with
//! `cargo test -p ch10-backward --features exercise linear_backward`.

use shared::Tensor;
use shared::nn::Linear;

use crate::linear::LinearGrads;

/// The gradients of `y = layer.forward(x)`, given `grad_y`: of the weight, of the bias (if
/// the layer has one) and of `x`.
///
/// # Shapes
/// `x`: `[.., in_features]`, `grad_y`: `[.., out_features]` with the same leading dims.
/// Returns `weight`: `[out_features, in_features]`, `bias`: `[out_features]`, `input`: the
/// shape of `x`.
pub fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads {
    // TODO: flatten x to [T, d_in] and grad_y to [T, d_out] (flatten(0, -2));
    // weight = grad_y2ᵀ·x2, bias = grad_y2 summed over the rows, input = grad_y2·W
    // reshaped back to x's shape (x.sizes()).
    let _ = (layer, x, grad_y);
    todo!("linear_backward")
}
