//! The first way to hide the future, step by step: take the ordinary attention weights, zero
//! the future ones, and divide each row by its new sum so that it sums to 1 again.
//!
//! It gives the same weights as [`crate::masked_softmax::masked_softmax`], but it computes
//! the softmax over keys that are then thrown away. Its only use here is to show the idea.

use shared::Tensor;

/// Divides every row by its sum, so each row sums to 1.
///
/// # Shapes
/// `masked`: `[.., rows, cols]` with non-negative entries and no all-zero row. Returns the
/// same shape.
// ANCHOR: renormalize_rows
pub fn renormalize_rows(masked: &Tensor) -> Tensor {
    let row_sums = masked.sum_dim(-1, true);
    masked / &row_sums
}
// ANCHOR_END: renormalize_rows
