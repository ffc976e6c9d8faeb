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
    // TODO: w_j = e^{s_j} / (e^S + Σ_k e^{s_k}) for every row of scores, with S the sink
    // logit of the row's head: its own term in the denominator, and no weight of its own
    // in the result.
    let _ = (scores, sinks, cat::<f32, &Tensor>);
    todo!("softmax_with_sink")
}
