//! RoPE's backward.
//!
//! `y = x·cos + rotate_half(x)·sin` turns every pair of features by an angle. A turn is
//! linear in `x`, and the gradient goes back through the opposite turn: the transpose of
//! a rotation by `θ` is the rotation by `−θ`. Written as the forward is:
//! `∂L/∂x = g·cos + rotate_half_backward(g·sin)`, where `rotate_half = cat(−x₂, x₁)` moves
//! numbers and flips a sign, so its backward moves them back and flips the same sign:
//! `cat(g₂, −g₁)`.

use shared::{Tensor, cat};

/// The backward of `rotate_half(x) = cat(−x₂, x₁)`: `cat(g₂, −g₁)`.
///
/// # Shapes
/// `grad`: `[.., d]`, `d` even. Returns `[.., d]`.
// ANCHOR: rotate_half_backward
pub fn rotate_half_backward(grad: &Tensor) -> Tensor {
    let half = grad.size(-1) / 2;
    let g1 = grad.slice(-1, ..half); // the gradient of −x₂'s places
    let g2 = grad.slice(-1, half..); // that of x₁'s places
    cat(&[g2, -&g1], -1)
}
// ANCHOR_END: rotate_half_backward

/// The gradient of `apply_rope(x, cos, sin)` given `grad_y`.
///
/// # Shapes
/// `grad_y`: `[batch, heads, tokens, head_dim]`; `cos`, `sin`: `[tokens, head_dim]`.
/// Returns the shape of `grad_y`.
// ANCHOR: rope_backward
pub fn rope_backward(grad_y: &Tensor, cos: &Tensor, sin: &Tensor) -> Tensor {
    grad_y * cos + rotate_half_backward(&(grad_y * sin))
}
// ANCHOR_END: rope_backward
