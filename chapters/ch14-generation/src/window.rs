//! The sliding-window mask: each query sees itself and the `w - 1` tokens before it.
//!
//! Chapter 5's causal mask hides the future, the keys `j > i` of query `i`. A window of
//! `w` also hides the distant past, the keys `j <= i - w`, so query `i` sees the keys
//! `i - w < j <= i`: at most `w` of them, however long the sequence grows. A window as long
//! as the sequence hides nothing more than the causal mask.

use shared::{Tensor, ones};

/// The keys each query may *not* see (`true` = hidden): the future, and with a window of
/// `w` also every key `w` or more tokens back.
///
/// # Shapes
/// Returns `[num_tokens, num_tokens]`: row `i` is query `i`, column `j` key `j`.
// ANCHOR: sliding_window_mask
pub fn sliding_window_mask(num_tokens: usize, window: Option<usize>) -> Tensor<bool> {
    let all = ones(&[num_tokens, num_tokens]);
    let future = all.triu(1); // j > i
    match window {
        None => future.bool(),
        // tril(-w) keeps j <= i - w: the keys that fell out of the window.
        Some(w) => (future + all.tril(-(w as i64))).bool(),
    }
}
// ANCHOR_END: sliding_window_mask
