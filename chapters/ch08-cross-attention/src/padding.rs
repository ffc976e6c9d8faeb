//! Padding, and the mask that makes attention ignore it.
//!
//! Sequences in a batch must have the same length to share one tensor, so the shorter ones
//! are padded with filler tokens. Those are not words: no query should attend to them. In
//! cross-attention the mask is therefore over the *keys* (the other sequence): every query
//! may look at every real token of the other sequence, and at none of its padding. A
//! causal mask would be wrong here, since there is no "future" between two different
//! sequences.

use shared::Tensor;

/// Marks the real tokens of each sequence in a padded batch: `1` for the first
/// `lengths[i]` positions of row `i`, `0` for the padding after them.
///
/// # Shapes
/// `lengths`: one length `<= max_len` per sequence. Returns `[lengths.len(), max_len]`.
// ANCHOR: key_padding
pub fn key_padding(lengths: &[usize], max_len: usize) -> Tensor<i64> {
    let flags: Vec<i64> = lengths
        .iter()
        .flat_map(|&len| (0..max_len).map(move |pos| i64::from(pos < len)))
        .collect();
    Tensor::from_vec(flags, &[lengths.len(), max_len])
}
// ANCHOR_END: key_padding

/// The attention mask of a key padding, `key_padding[:, None, None, :]` as booleans
/// (`true` = real token, may be attended to), shaped so that it broadcasts over the heads
/// and the queries of the scores `[batch, heads, queries, keys]`.
///
/// # Shapes
/// `key_padding`: `[batch, keys]` of 0/1. Returns `[batch, 1, 1, keys]`.
// ANCHOR: padding_mask
pub fn padding_mask(key_padding: &Tensor<i64>) -> Tensor<bool> {
    key_padding
        .eq_scalar(0)
        .logical_not()
        .unsqueeze(1)
        .unsqueeze(1)
}
// ANCHOR_END: padding_mask
