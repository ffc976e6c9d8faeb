//! Masking the scores before the softmax.
//!
//! Softmax gives `exp(score)` a share of the row's total. A score of `-inf` has
//! `exp(-inf) = 0`, so it gets weight exactly 0 and adds nothing to the total: the visible
//! keys share all of the weight among themselves. That is why this one step gives the same
//! weights as the two-step way of chapter 5's first half (softmax over all keys, zero the
//! future, divide each row by its new sum): the common factor, the row's full total,
//! cancels in the division.

use shared::Tensor;

use ch04_trainable::scaled::scaled_attention_weights;

/// Attention weights that ignore the keys `mask` marks: the scores at `true` places become
/// `-inf`, then `softmax(scores / √d_k)` over the last dim, as chapter 4.
///
/// Every row needs at least one unmasked key; a fully masked row has no weights to share
/// and comes out as NaN, as in PyTorch. A causal mask never masks a whole row (the diagonal
/// stays visible).
///
/// # Shapes
/// `scores`: `[.., queries, keys]`, `mask`: broadcastable to it (e.g. `[queries, keys]`).
/// Returns the shape of `scores`.
// ANCHOR: masked_softmax
pub fn masked_softmax(scores: &Tensor, mask: &Tensor<bool>, d_k: usize) -> Tensor {
    let masked = scores.masked_fill(mask, f32::NEG_INFINITY);
    scaled_attention_weights(&masked, d_k)
}
// ANCHOR_END: masked_softmax
