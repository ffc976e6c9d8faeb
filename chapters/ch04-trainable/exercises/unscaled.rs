//! Exercise: attention weights without the `1/√d_k`, their entropy, and a prediction.
//! Replace the `todo!()`s; test with
//! `cargo test -p ch04-trainable --features exercise unscaled_weights`.

use shared::Tensor;

use crate::answers::Trend;

/// Attention weights without the scaling: `softmax(ω)` along the last dim.
///
/// # Shapes
/// `scores`: `[.., queries, keys]`. Returns the same shape.
pub fn unscaled_attention_weights(scores: &Tensor) -> Tensor {
    // TODO: the softmax of the scores as they are.
    let _ = scores;
    todo!("unscaled_attention_weights")
}

/// The entropy `-Σⱼ wⱼ·ln wⱼ` of every row of weights, in nats, with `0·ln 0` taken as 0.
///
/// # Shapes
/// `weights`: `[.., queries, keys]`, rows summing to 1. Returns `[.., queries]`.
pub fn row_entropy(weights: &Tensor) -> Tensor {
    // TODO: -Σ w·ln w along the last dim; mind the weights that are exactly 0.
    let _ = weights;
    todo!("row_entropy")
}

/// The question: for random queries and keys with entries of variance 1, what happens to
/// the average entropy of the weights as `d_k` grows, with the `1/√d_k` (`scaled`) and
/// without it?
pub fn predict_entropy_trend(scaled: bool) -> Trend {
    // TODO: your prediction for each case.
    let _ = scaled;
    todo!("predict_entropy_trend")
}
