//! Exercise: the sliding-window mask. Replace the `todo!()`; test with
//! `cargo test -p ch14-generation --features exercise sliding_window`.

use shared::Tensor;

/// The keys each query may *not* see (`true` = hidden): the future, and with a window of
/// `w` also every key `w` or more tokens back.
///
/// # Shapes
/// Returns `[num_tokens, num_tokens]`: row `i` is query `i`, column `j` key `j`.
pub fn sliding_window_mask(num_tokens: usize, window: Option<usize>) -> Tensor<bool> {
    // TODO: hide key j from query i when j > i (the future) or, with Some(w), when
    // j <= i - w (out of the window).
    let _ = (num_tokens, window);
    todo!("sliding_window_mask")
}
