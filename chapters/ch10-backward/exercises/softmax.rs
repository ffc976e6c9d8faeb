//! Exercise: softmax's backward. Replace the `todo!()`; test with
//! `cargo test -p ch10-backward --features exercise softmax_backward`.

use shared::Tensor;

/// The gradient of the softmax input, from the softmax output `y` and its gradient
/// `grad_y`, over the last dim: `y ∘ (grad_y − rowsum(grad_y ∘ y))`.
///
/// # Shapes
/// `y`, `grad_y`: `[.., n]`, the same shape. Returns it.
pub fn softmax_backward(y: &Tensor, grad_y: &Tensor) -> Tensor {
    // TODO: one dot product per row (crate::lanes::row_dot adds it in PyTorch's order),
    // then (g - dot) * y for every element of the row. Build the result with
    // Tensor::from_vec(values, y.sizes()).
    let _ = (y, grad_y);
    todo!("softmax_backward")
}
