//! Exercise (predict, then check): which reordering of the features turns interleaved RoPE
//! into half-split RoPE? Replace the `todo!()`; test with
//! `cargo test -p ch12-positions --features exercise half_split_features`.

use shared::Tensor;

/// The order of features `features` such that for every `x`,
/// `rope_interleaved(x)` equals `rope_half_split(x[.., features])[.., back]` (to rounding),
/// where `back` undoes `features`.
///
/// # Shapes
/// Returns `[d]` (`d` even): a permutation of `0..d`.
pub fn half_split_features(d: usize) -> Tensor<i64> {
    // TODO: interleaved RoPE turns the pairs (0, 1), (2, 3), ..; half-split RoPE turns the
    // pairs (0, d/2), (1, d/2 + 1), ... Which feature of x must land at position 0, which
    // at d/2, which at 1? Write down d = 4 on paper first.
    let _ = d;
    todo!("half_split_features")
}
