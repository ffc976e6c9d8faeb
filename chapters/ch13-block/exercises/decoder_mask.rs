//! Exercise: the mask of masked decoder self-attention. Replace the `todo!()`; test with
//! `cargo test -p ch13-block --features exercise decoder_mask`.

use shared::Tensor;

/// The decoder's self-attention mask: `true` where a key is in the query's future or is
/// padding.
///
/// # Shapes
/// `pad`: `[batch, tokens]`, `true` at padding. Returns `[batch, 1, tokens, tokens]`.
pub fn decoder_mask(pad: &Tensor<bool>) -> Tensor<bool> {
    // TODO: make the causal mask for pad.size(1) tokens with `super::causal`
    // ([1, 1, t, t]) and the key padding mask with `super::hide_padded_keys` ([b, 1, 1, t]),
    // and combine them with `|` (`logical_or`): hidden when either hides it.
    let _ = pad;
    todo!("decoder_mask")
}
