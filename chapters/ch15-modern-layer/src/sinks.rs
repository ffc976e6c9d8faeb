//! Learned attention sinks (gpt-oss): one more logit per head in every softmax.
//!
//! Every row of a softmax sums to 1, so a query must put its weight somewhere even when
//! no key is relevant; trained models learn to park it on the first token (Xiao et al.,
//! 2023, "Efficient Streaming Language Models with Attention Sinks"). gpt-oss gives every
//! head a learned logit `S` of its own instead: it is appended to each row of scores as
//! one more column, softmaxed with the row, and dropped, so the kept weights sum to
//! `1 - e^S / (e^S + Σ e^s)`, less than 1. The formula is
//! `w_j = e^{s_j} / (e^S + Σ_k e^{s_k})`; the code below computes it in gpt-oss's own
//! order, which rounds as its reference does.

use shared::{Tensor, cat};

/// `softmax(cat([scores, S]))[..., :-1]`: every row of scores with its head's sink logit
/// as one more column, softmaxed, the column dropped.
///
/// # Shapes
/// `scores`: `[batch, heads, queries, keys]`; `sinks`: `[heads]`.
/// Returns `[batch, heads, queries, keys]`.
// ANCHOR: softmax_with_sink
pub fn softmax_with_sink(scores: &Tensor, sinks: &Tensor) -> Tensor {
    let [b, h, q, k] = scores.dims();
    let column = sinks.view([1, h, 1, 1]).expand([b, h, q, 1]);
    cat(&[scores, &column], -1).softmax(-1).slice(-1, ..k)
}
// ANCHOR_END: softmax_with_sink
