//! Finding the sink. Exercise: see `cargo run -p learn -- hint ch20-real-model sink_share`.

use shared::Tensor;

/// The mean weight each head's queries give to key 0, over every sequence and every query
/// but the first.
///
/// # Shapes
/// `weights`: `[batch, heads, tokens, tokens]`, `tokens >= 2`. Returns one share per head.
pub fn sink_share(weights: &Tensor) -> Vec<f64> {
    // TODO: for each head, the mean (in f64) of the weight every query from position 1 on
    // gives to key 0, over the batch too.
    let _ = weights;
    todo!("sink_share")
}
