//! A sliding-window mask: every token sees itself and the `window - 1` tokens before it,
//! nothing earlier and nothing later. The cost of a row of attention no longer grows with
//! the length of the text, and stacking layers lets information travel further back than
//! one window: each layer passes on what its window gathered in the layer below (Beltagy
//! et al., 2020, "Longformer"; the Mistral 7B models use it).

use shared::{Tensor, ones};

/// `true` where query `row` must not see key `col`: a future key (`col > row`) or one
/// `window` or more places back (`row - col >= window`). With `window >= context_length`
/// this is the causal mask.
///
/// # Shapes
/// Returns `[context_length, context_length]`. `window >= 1`.
// ANCHOR: sliding_window_mask
pub fn sliding_window_mask(context_length: usize, window: usize) -> Tensor<bool> {
    let square = ones(&[context_length, context_length]);
    // The future (strictly above the diagonal) and the far past (on or below the
    // diagonal `window` places under the main one).
    let hidden = &square.triu(1) + &square.tril(-(window as i64));
    hidden.bool()
}
// ANCHOR_END: sliding_window_mask

/// The question: with `layers` attention layers stacked, each under a sliding window of
/// `window` keys, how many places back can the last layer's output of a token depend on
/// the first layer's inputs? (0 means: only on the token itself.)
// ANCHOR: predict_reach
pub fn predict_reach(layers: usize, window: usize) -> usize {
    // One layer reaches window - 1 places back; the next layer starts from outputs that
    // each already reach that far.
    layers * (window - 1)
}
// ANCHOR_END: predict_reach
