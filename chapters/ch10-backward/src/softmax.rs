//! Softmax's backward, as a Jacobian-vector product.
//!
//! For one row, `p_j = exp(s_j) / Σ_k exp(s_k)`, and `∂p_j/∂s_i = p_j (δ_ij − p_i)`: the
//! Jacobian is `diag(p) − p pᵀ`, an `n × n` matrix per row. The backward never builds it:
//! `grad_s_i = Σ_j grad_p_j · p_j (δ_ij − p_i) = p_i (grad_p_i − Σ_j grad_p_j p_j)`, one dot
//! product per row and one elementwise step, `dS = P ∘ (dP − rowsum(dP ∘ P))`.

use shared::Tensor;

/// The gradient of the softmax input, from the softmax output `y` and its gradient
/// `grad_y`, over the last dim: `y ∘ (grad_y − rowsum(grad_y ∘ y))`.
///
/// A weight of 0 (a masked key) gets a gradient of 0.
///
/// # Shapes
/// `y`, `grad_y`: `[.., n]`, the same shape. Returns it.
///
/// # Panics
/// If the shapes differ or `y` is 0-d.
// ANCHOR: softmax_backward
pub fn softmax_backward(y: &Tensor, grad_y: &Tensor) -> Tensor {
    assert!(
        y.sizes() == grad_y.sizes() && y.dim() > 0,
        "softmax_backward: output {:?} and its gradient {:?} must have one \
         shape, of at least one dim",
        y.sizes(),
        grad_y.sizes()
    );
    let n = y.size(-1).max(1);
    let (y_all, g_all) = (y.to_vec(), grad_y.to_vec());
    let mut grad_x = Vec::with_capacity(y_all.len());
    for (p, g) in y_all.chunks(n).zip(g_all.chunks(n)) {
        // rowsum(dP ∘ P): one number per row
        let dot: f32 = g.iter().zip(p).map(|(g_j, p_j)| g_j * p_j).sum();
        // p_i · (dP_i − dot) for every element of the row
        grad_x.extend(g.iter().zip(p).map(|(g_i, p_i)| p_i * (g_i - dot)));
    }
    Tensor::from_vec(grad_x, y.sizes())
}
// ANCHOR_END: softmax_backward
