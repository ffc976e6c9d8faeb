//! Exercise: softmax as the formula says. Replace the `todo!()`; test with
//! `cargo test -p ch03-softmax --features exercise softmax_naive`.

use shared::Tensor;

/// `exp(x) / exp(x).sum()`, over all the elements of `x`.
///
/// # Shapes
/// `x`: `[n]`. Returns `[n]`.
pub fn softmax_naive(x: &Tensor) -> Tensor {
    // TODO: exponentiate every score, then divide by the sum of the exponentials.
    let _ = x;
    todo!("softmax_naive")
}
