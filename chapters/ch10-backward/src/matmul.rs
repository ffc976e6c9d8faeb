//! The backward of a matrix product.
//!
//! For `c = a·b` with `a`: `[m, k]` and `b`: `[k, n]`, each `c[i, j] = Σ_t a[i, t]·b[t, j]`.
//! The loss reaches `a[i, t]` through every `c[i, j]` of row `i`, with weight `b[t, j]`,
//! so `∂L/∂a[i, t] = Σ_j g[i, j]·b[t, j]`: the product `g·bᵀ`. Likewise
//! `∂L/∂b[t, j] = Σ_i a[i, t]·g[i, j]`, the product `aᵀ·g`. The backward of a product is
//! two products, and the shapes check themselves: `[m, n]·[n, k] = [m, k]` is `a`'s shape,
//! `[k, m]·[m, n] = [k, n]` is `b`'s.
//!
//! A batched product (`[.., m, k]·[.., k, n]`) is one product per batch entry, so its
//! backward is the same two products per entry.

use shared::Tensor;

/// The gradients of `c = a.matmul(b)` with respect to `a` and `b`, given `grad_c`:
/// `(grad_c·bᵀ, aᵀ·grad_c)`.
///
/// They are computed on the same operands PyTorch's `bmm` backward uses (`b`'s transpose as
/// a view, `a`'s transpose as a view), so the products take PyTorch's kernels and its order
/// of additions. For `scores = q·kᵀ` the second result is the gradient of the view `kᵀ`;
/// its transpose is the gradient of `k`.
///
/// # Shapes
/// `a`: `[.., m, k]`, `b`: `[.., k, n]` with the same batch dims, `grad_c`: `[.., m, n]`.
/// Returns `([.., m, k], [.., k, n])`.
// ANCHOR: matmul_backward
pub fn matmul_backward(a: &Tensor, b: &Tensor, grad_c: &Tensor) -> (Tensor, Tensor) {
    let grad_a = grad_c.matmul(&b.transpose(-2, -1));
    let grad_b = a.transpose(-2, -1).matmul(grad_c);
    (grad_a, grad_b)
}
// ANCHOR_END: matmul_backward
