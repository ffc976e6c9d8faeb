//! The mask of masked decoder self-attention, kept in its own file because it is an
//! exercise.

use shared::Tensor;

use super::{causal, hide_padded_keys};

/// The decoder's self-attention mask: a key is hidden from a query when it lies in the
/// query's future *or* is padding, `causal | pad[:, None, None, :]`. The two pieces
/// broadcast: `[1, 1, t, t]` with `[b, 1, 1, t]` gives `[b, 1, t, t]`.
///
/// # Shapes
/// `pad`: `[batch, tokens]`, `true` at padding. Returns `[batch, 1, tokens, tokens]`.
// ANCHOR: decoder_mask
pub fn decoder_mask(pad: &Tensor<bool>) -> Tensor<bool> {
    &causal(pad.size(1)) | &hide_padded_keys(pad)
}
// ANCHOR_END: decoder_mask
