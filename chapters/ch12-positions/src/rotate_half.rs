//! `rotate_half`, the helper of Hugging Face's RoPE: it turns every pair of features by
//! 90 degrees, where feature `i` pairs with feature `i + d/2` (the two halves).

use shared::{Tensor, cat};

/// `(x1, x2) ↦ (-x2, x1)` on the two halves of the last dim. For one pair `(a, b)` =
/// `(x[i], x[i + d/2])` that is `(-b, a)`: the point `(a, b)` turned by 90 degrees. So
/// `x·cos θ + rotate_half(x)·sin θ` turns the pair by θ.
///
/// # Shapes
/// `x`: `[.., d]` (`d` even). Returns `[.., d]`.
// ANCHOR: rotate_half
pub fn rotate_half(x: &Tensor) -> Tensor {
    let half = x.size(-1) / 2;
    let x1 = x.slice(-1, ..half); // the first feature of every pair
    let x2 = x.slice(-1, half..); // the second
    cat(&[-&x2, x1], -1)
}
// ANCHOR_END: rotate_half
