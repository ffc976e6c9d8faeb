//! Exercise: `rotate_half`. Replace the `todo!()`; test with
//! `cargo test -p ch12-positions --features exercise rotate_half`.

use shared::Tensor;

/// `(x1, x2) ↦ (-x2, x1)` on the two halves `x1`, `x2` of the last dim.
///
/// # Shapes
/// `x`: `[.., d]` (`d` even). Returns `[.., d]`.
pub fn rotate_half(x: &Tensor) -> Tensor {
    // TODO: split the last dim into its first and second half, and put them back together
    // as (minus the second half, the first half).
    let _ = x;
    todo!("rotate_half")
}
