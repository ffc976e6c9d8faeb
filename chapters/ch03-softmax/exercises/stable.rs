//! Exercise: the stable softmax along any dim. Replace the `todo!()`; test with
//! `cargo test -p ch03-softmax --features exercise softmax_stable`.

use shared::Tensor;

/// Softmax along `dim`: `exp(x - max) / sum(exp(x - max))`, max and sum taken along `dim`.
///
/// # Shapes
/// `x`: any shape, `dim` in `[-ndim, ndim)`. Returns the shape of `x`; every lane along
/// `dim` sums to 1.
pub fn softmax_stable(x: &Tensor, dim: i64) -> Tensor {
    // TODO: take the max along `dim` (keeping the dim), subtract it, exponentiate, and
    // divide by the sum along `dim` (keeping the dim).
    let _ = (x, dim);
    todo!("softmax_stable")
}
