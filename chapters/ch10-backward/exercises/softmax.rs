//! Exercise: softmax's backward. Replace the `todo!()`; test with
//! `cargo test -p ch10-backward --features exercise softmax_backward`.

use shared::Tensor;

/// The gradient of the softmax input, from the softmax output `y` and its gradient
/// `grad_y`, over the last dim: `y ∘ (grad_y − rowsum(grad_y ∘ y))`.
///
/// # Shapes
/// `y`, `grad_y`: `[.., n]`, the same shape. Returns it.
pub fn softmax_backward(y: &Tensor, grad_y: &Tensor) -> Tensor {
    // TODO: for each row of the last dim, the dot product of the row of grad_y with the
    // row of y, then y_i * (g_i - dot) for every element of the row. Tensor operations
    // or a plain loop over y.to_vec().chunks(n) both work.
    let _ = (y, grad_y);
    todo!("softmax_backward")
}
