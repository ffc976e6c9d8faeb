//! What a sliding window throws away.
//! Exercise: see `cargo run -p learn -- hint ch20-real-model evicted_share`.

use shared::Tensor;

/// The mean weight each head's queries give to the keys a window of `window` keys with
/// `sink_tokens` sinks would evict, over every sequence and every query.
///
/// # Shapes
/// `weights`: `[batch, heads, tokens, tokens]`, causal. Returns one share per head.
pub fn evicted_share(
    weights: &Tensor,
    window: usize,
    sink_tokens: usize,
) -> Vec<f64> {
    // TODO: for each head, add up (in f64) the weight every query gives to the keys it can
    // see causally but that chapter 15's window and sinks would drop from the cache, and
    // average over the queries and the batch.
    let _ = (weights, window, sink_tokens);
    todo!("evicted_share")
}
