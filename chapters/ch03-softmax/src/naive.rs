//! Softmax as the formula says: exponentiate, then divide by the sum of the exponentials.
//!
//! Correct for the small scores of the article, but `exp` of a float32 above about 88.7
//! is `inf`. One large score makes the sum `inf`, every weight `finite / inf = 0` except
//! the large ones, which become `inf / inf = NaN`.

use shared::Tensor;

/// The article's `softmax`: `exp(x) / exp(x).sum()`, over all the elements of `x`.
/// Overflows (NaN weights) when a score is above about 88.7; see
/// [`crate::stable::softmax_stable`] for the version that does not.
///
/// # Shapes
/// `x`: `[n]` (any shape works and is normalised as a whole). Returns the shape of `x`.
// ANCHOR: softmax_naive
pub fn softmax_naive(x: &Tensor) -> Tensor {
    let exp = x.exp();
    &exp / &exp.sum()
}
// ANCHOR_END: softmax_naive
