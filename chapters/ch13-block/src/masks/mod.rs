//! The masks of the three uses of attention in the original Transformer, built from the
//! sequences' lengths. Every mask here marks the *hidden* places with `true` (as chapter 5's
//! causal mask does), and its shape broadcasts against the scores
//! `[batch, heads, queries, keys]`:
//!
//! | attention | queries, keys from | hidden | shape |
//! |---|---|---|---|
//! | encoder self-attention | encoder, encoder | padded keys | `[b, 1, 1, k]` |
//! | masked decoder self-attention | decoder, decoder | future keys or padded keys | `[b, 1, q, k]` |
//! | encoder-decoder cross-attention | decoder, encoder | the encoder's padded keys | `[b, 1, 1, k]` |

use ch05_causal::causal_mask;
use shared::{Tensor, arange};

#[cfg_attr(feature = "exercise", path = "../../exercises/decoder_mask.rs")]
mod decoder;
pub use decoder::decoder_mask;

/// `true` at the padding of each sequence when the batch is padded on the right (the real
/// tokens first): `arange(tokens)[None, :] >= lengths[:, None]`.
///
/// # Shapes
/// `lengths`: `[batch]`, each at most `tokens`. Returns `[batch, tokens]`.
// ANCHOR: padding_mask
pub fn padding_mask(lengths: &Tensor<i64>, tokens: usize) -> Tensor<bool> {
    let positions = arange(0, tokens, 1); // [tokens]
    positions.unsqueeze(0).ge(&lengths.unsqueeze(1))
}
// ANCHOR_END: padding_mask

/// `true` at the padding when the batch is padded on the left (the real tokens last, so
/// every sequence ends at the same place, as batched generation wants):
/// `arange(tokens)[None, :] < (tokens - lengths)[:, None]`.
///
/// # Shapes
/// `lengths`: `[batch]`, each at most `tokens`. Returns `[batch, tokens]`.
pub fn left_padding_mask(lengths: &Tensor<i64>, tokens: usize) -> Tensor<bool> {
    let n = tokens as i64;
    let starts = Tensor::from_vec(
        lengths.to_vec().into_iter().map(|len| n - len).collect(),
        &[lengths.size(0)],
    );
    arange(0, n, 1).unsqueeze(0).lt(&starts.unsqueeze(1))
}

/// Hides the padded keys from every query: the padding mask of the keys' sequences with a
/// dim for the heads and one for the queries, `pad[:, None, None, :]`. The mask of encoder
/// self-attention, and of cross-attention with the encoder's padding.
///
/// # Shapes
/// `key_pad`: `[batch, keys]`. Returns `[batch, 1, 1, keys]`.
// ANCHOR: hide_padded_keys
pub fn hide_padded_keys(key_pad: &Tensor<bool>) -> Tensor<bool> {
    key_pad.unsqueeze(1).unsqueeze(1)
}
// ANCHOR_END: hide_padded_keys

/// Chapter 5's causal mask with a dim for the batch and one for the heads:
/// `triu(ones(tokens, tokens), diagonal=1).bool()[None, None]`.
///
/// # Shapes
/// Returns `[1, 1, tokens, tokens]`.
pub fn causal(tokens: usize) -> Tensor<bool> {
    causal_mask(tokens).unsqueeze(0).unsqueeze(0)
}
