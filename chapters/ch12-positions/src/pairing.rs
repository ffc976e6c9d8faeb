//! Which features pair up: the one difference between the two conventions of RoPE.
//!
//! Interleaved RoPE (Meta) turns the pairs `(0, 1), (2, 3), ..`; half-split RoPE (Hugging
//! Face) turns `(0, d/2), (1, d/2 + 1), ..`, each pair `i` by the same angle `m·θ_i`. So
//! they are the same rotation once the features are reordered: move the even features to
//! the first half and the odd ones to the second, apply half-split RoPE, and move them back.
//! (This is why checkpoints converted from Meta's format to Hugging Face's have the rows of
//! their query and key weights permuted.)

use shared::{Tensor, arange, cat};

/// The order of features that makes interleaved pairs half-split pairs:
/// `[0, 2, 4, .., d-2, 1, 3, .., d-1]`. For any `x`,
/// `rope_interleaved(x)` equals `rope_half_split(x[.., features])[.., back]` (to rounding),
/// where `back` is the inverse permutation.
///
/// # Shapes
/// Returns `[d]` (`d` even).
// ANCHOR: half_split_features
pub fn half_split_features(d: usize) -> Tensor<i64> {
    cat(&[arange(0, d, 2), arange(1, d, 2)], 0) // evens, then odds
}
// ANCHOR_END: half_split_features
