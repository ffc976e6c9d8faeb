//! Exercise: masking the scores before the softmax. Replace the `todo!()`; test with
//! `cargo test -p ch05-causal --features exercise masked_softmax`.

use shared::Tensor;

/// Attention weights that ignore the keys `mask` marks: `softmax(scores / √d_k)` over the
/// last dim, with the scores at `true` places replaced by `-inf` first.
///
/// # Shapes
/// `scores`: `[.., queries, keys]`, `mask`: broadcastable to it. Returns the shape of
/// `scores`.
pub fn masked_softmax(scores: &Tensor, mask: &Tensor<bool>, d_k: usize) -> Tensor {
    // TODO: fill the masked scores with f32::NEG_INFINITY, then scale and softmax them as
    // chapter 4 does (`ch04_trainable::scaled::scaled_attention_weights`).
    let _ = (scores, mask, d_k);
    todo!("masked_softmax")
}
