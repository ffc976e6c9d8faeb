//! What the `1/√d_k` is for: drop it and watch the weights as the key size grows.
//!
//! For queries and keys with entries of variance 1, a score `q·k` is a sum of `d_k`
//! products and has variance `d_k`. Without the scaling, a larger key size means larger
//! gaps between scores and so weights closer to one-hot; with it, the scores keep variance
//! 1 whatever `d_k` is. The entropy of a row of weights, `-Σ w·ln w`, measures how spread
//! out it is: `ln n` for `n` equal weights, 0 for a one-hot row.

use shared::Tensor;

use crate::answers::Trend;

/// Attention weights without the scaling: `softmax(ω)` along the last dim.
///
/// # Shapes
/// `scores`: `[.., queries, keys]`. Returns the same shape.
// ANCHOR: unscaled_attention_weights
pub fn unscaled_attention_weights(scores: &Tensor) -> Tensor {
    scores.softmax(-1)
}
// ANCHOR_END: unscaled_attention_weights

/// The entropy `-Σⱼ wⱼ·ln wⱼ` of every row of weights, in nats, with `0·ln 0` taken as 0.
///
/// # Shapes
/// `weights`: `[.., queries, keys]`, rows summing to 1. Returns `[.., queries]`.
// ANCHOR: row_entropy
pub fn row_entropy(weights: &Tensor) -> Tensor {
    // A weight that underflowed to 0 would give 0·(-inf) = NaN; any tiny positive stand-in
    // for it gives a term of (almost) 0, the limit of w·ln w.
    let logs = weights.clamp_min(f32::MIN_POSITIVE).log();
    -(weights * &logs).sum_dim(-1, false)
}
// ANCHOR_END: row_entropy

/// The question: for random queries and keys with entries of variance 1, what happens to
/// the average entropy of the weights as `d_k` grows, with the `1/√d_k` (`scaled`) and
/// without it?
// ANCHOR: predict_entropy_trend
pub fn predict_entropy_trend(scaled: bool) -> Trend {
    if scaled {
        // The scaled scores have variance 1 for every d_k.
        Trend::StaysAbout
    } else {
        // The scores' spread grows like √d_k: larger gaps, sharper weights.
        Trend::Falls
    }
}
// ANCHOR_END: predict_entropy_trend
