//! Exercise: from scores to attention weights. Replace the `todo!()`; test with
//! `cargo test -p ch04-trainable --features exercise scaled_attention_weights`.

use shared::Tensor;

/// Attention weights from unnormalised scores ω: `softmax(ω / √d_k)` along the last dim.
///
/// # Shapes
/// `scores`: `[.., queries, keys]` (or `[keys]`), `d_k`: the size of one key. Returns the
/// same shape.
pub fn scaled_attention_weights(scores: &Tensor, d_k: usize) -> Tensor {
    // TODO: divide the scores by the square root of d_k (as an f32), then take the
    // softmax over the last dim (-1).
    let _ = (scores, d_k);
    todo!("scaled_attention_weights")
}
