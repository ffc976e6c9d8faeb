//! Exercise: padding and the padding mask. Replace each `todo!()`; test with
//! `cargo test -p ch08-cross-attention --features exercise padding`.

use shared::Tensor;

/// Marks the real tokens of each sequence in a padded batch: 1 for the first `lengths[i]`
/// positions of row `i`, 0 after them.
///
/// # Shapes
/// Returns `[lengths.len(), max_len]`.
pub fn key_padding(lengths: &[usize], max_len: usize) -> Tensor<i64> {
    // TODO: for every sequence, max_len flags: 1 while the position is below its length,
    // then 0; all rows together in one [batch, max_len] int64 tensor.
    let _ = (lengths, max_len);
    todo!("key_padding")
}

/// The attention mask of a key padding: `true` where the key is a real token, shaped to
/// broadcast over heads and queries.
///
/// # Shapes
/// `key_padding`: `[batch, keys]` of 0/1. Returns `[batch, 1, 1, keys]`.
pub fn padding_mask(key_padding: &Tensor<i64>) -> Tensor<bool> {
    // TODO: true where key_padding is not 0, with two dims of size 1 inserted after the
    // batch dim (PyTorch's key_padding[:, None, None, :]).
    let _ = key_padding;
    todo!("padding_mask")
}
