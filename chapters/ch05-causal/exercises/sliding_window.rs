//! Exercise: a sliding-window mask, and how far back stacked layers can see. Replace the
//! `todo!()`s; test with `cargo test -p ch05-causal --features exercise sliding_window`.

use shared::Tensor;

/// `true` where query `row` must not see key `col`: a future key (`col > row`) or one
/// `window` or more places back (`row - col >= window`). With `window >= context_length`
/// this is the causal mask.
///
/// # Shapes
/// Returns `[context_length, context_length]`. `window >= 1`.
pub fn sliding_window_mask(context_length: usize, window: usize) -> Tensor<bool> {
    // TODO: the causal mask's triangle plus the keys too far back.
    let _ = (context_length, window);
    todo!("sliding_window_mask")
}

/// The question: with `layers` attention layers stacked, each under a sliding window of
/// `window` keys, how many places back can the last layer's output of a token depend on
/// the first layer's inputs? (0 means: only on the token itself.)
pub fn predict_reach(layers: usize, window: usize) -> usize {
    // TODO: your prediction, as a formula in `layers` and `window`.
    let _ = (layers, window);
    todo!("predict_reach")
}
