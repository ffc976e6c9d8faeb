//! From scores to weights: scale the query-key dot products by `1/√d_k`, then softmax.
//!
//! A dot product of two `d_k`-dimensional vectors whose entries have variance 1 has variance
//! `d_k`, so the scores grow with the key size. Large scores push softmax towards a one-hot
//! vector, where almost every weight is 0 and learning (the gradients) stalls. Dividing by
//! `√d_k` brings the scores back to variance 1 whatever `d_k` is: this is the "scaled" in
//! scaled dot-product attention.

use shared::Tensor;

/// Attention weights from unnormalised scores ω: `softmax(ω / √d_k)` along the last dim, so
/// each query's weights over the keys are positive and sum to 1.
///
/// The division is by `√d_k` rounded to `f32`, as PyTorch does for `scores / d_k**0.5`.
///
/// # Shapes
/// `scores`: `[.., queries, keys]` (or `[keys]` for one query), `d_k`: the size of one key.
/// Returns the same shape.
// ANCHOR: scaled_attention_weights
pub fn scaled_attention_weights(scores: &Tensor, d_k: usize) -> Tensor {
    let scale = (d_k as f32).sqrt();
    (scores / scale).softmax(-1)
}
// ANCHOR_END: scaled_attention_weights
