//! Exercise: the causal mask. Replace the `todo!()`; test with
//! `cargo test -p ch05-causal --features exercise causal_mask`.

use shared::Tensor;

/// `true` where query `row` would see a future key (`col > row`), `false` elsewhere.
///
/// # Shapes
/// Returns `[context_length, context_length]`.
pub fn causal_mask(context_length: usize) -> Tensor<bool> {
    // TODO: make a square matrix of ones, keep its strict upper triangle (above the
    // diagonal, not on it) and turn it into a boolean mask.
    let _ = context_length;
    todo!("causal_mask")
}
