//! Backwards of the elementwise steps between the scores and the weights: scaling by
//! `1/√d_k`, `masked_fill` and dropout.
//!
//! An elementwise step `y = f(x)` touches each element on its own, so its Jacobian is
//! diagonal and the backward is elementwise too: `grad_x = grad_y ∘ f'(x)`.

use shared::Tensor;

/// The backward of `y = x / scale`: `grad_y / scale`.
///
/// PyTorch divides here too, rather than multiplying by `1/scale` (which can differ in the
/// last bit), because the forward divides.
///
/// # Shapes
/// Any shape; unchanged.
// ANCHOR: scale_backward
pub fn scale_backward(grad_y: &Tensor, scale: f32) -> Tensor {
    grad_y / scale
}
// ANCHOR_END: scale_backward

/// The backward of `y = x.masked_fill(hidden, value)`: `grad_y` with zeros where `hidden`
/// is `true`. A filled element is a constant, so nothing flows back through it.
///
/// # Shapes
/// `grad_y`: any shape; `hidden` broadcasts to it. Returns the shape of `grad_y`.
// ANCHOR: masked_fill_backward
pub fn masked_fill_backward(grad_y: &Tensor, hidden: &Tensor<bool>) -> Tensor {
    grad_y.masked_fill(hidden, 0.0)
}
// ANCHOR_END: masked_fill_backward

/// The backward of dropout, `y = x ∘ noise`: `grad_y ∘ noise`, with the forward's own
/// noise (0 where an element was dropped, `1/(1 - p)` where it was kept). Without noise
/// (evaluation mode, `p = 0`) dropout was the identity and so is its backward.
///
/// # Shapes
/// `grad_y` and `noise`: the same shape. Returns it.
// ANCHOR: dropout_backward
pub fn dropout_backward(grad_y: &Tensor, noise: Option<&Tensor>) -> Tensor {
    match noise {
        Some(noise) => grad_y * noise,
        None => grad_y.clone(),
    }
}
// ANCHOR_END: dropout_backward
