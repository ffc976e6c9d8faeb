//! Add-one smoothing: your code (see `exercises/hints.md`).

/// Add-one smoothing: each count plus one, divided by the sum of them all, so that
/// every outcome gets a probability above zero and the probabilities sum to one.
///
/// # Shapes
/// `counts`: `[n]` → `[n]`.
pub fn smoothed(counts: &[u64]) -> Vec<f64> {
    // TODO: the probability of outcome i is its count plus one, divided by the sum
    // over every outcome of its count plus one.
    let _ = counts;
    todo!("smoothed")
}
