//! The mask of attention with an optional sliding window.
//!
//! Chapter 5's causal mask hides the future, the keys `j > i` of query `i`; chapter 5's
//! sliding-window mask also hides the distant past, the keys `j <= i - w`, so query `i`
//! sees the keys `i - w < j <= i`. A window as long as the sequence hides nothing more
//! than the causal mask.

use ch05_causal::causal_mask;
use shared::Tensor;

/// The keys each query may *not* see (`true` = hidden): the future, and with a window of
/// `w` also every key `w` or more tokens back.
///
/// # Shapes
/// Returns `[num_tokens, num_tokens]`: row `i` is query `i`, column `j` key `j`.
pub fn sliding_window_mask(num_tokens: usize, window: Option<usize>) -> Tensor<bool> {
    match window {
        None => causal_mask(num_tokens),
        Some(w) => ch05_causal::sliding_window::sliding_window_mask(num_tokens, w),
    }
}
