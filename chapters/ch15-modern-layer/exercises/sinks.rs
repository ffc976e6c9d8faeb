//! Exercise: gpt-oss's learned attention sinks. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise softmax_with_sink`.

use shared::{Tensor, cat};

/// `softmax(cat([scores, S]))[..., :-1]`: every row of scores with its head's sink logit
/// as one more column, softmaxed, the column dropped.
///
/// # Shapes
/// `scores`: `[batch, heads, queries, keys]`; `sinks`: `[heads]`.
/// Returns `[batch, heads, queries, keys]`.
pub fn softmax_with_sink(scores: &Tensor, sinks: &Tensor) -> Tensor {
    // TODO: make the sink column: sinks viewed as [1, heads, 1, 1] and expanded to
    // [batch, heads, queries, 1]; cat it after the scores on the last dim; softmax over
    // the last dim; keep the first `keys` columns.
    let _ = (scores, sinks, cat::<f32, &Tensor>);
    todo!("softmax_with_sink")
}
