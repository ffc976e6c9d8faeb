// ANCHOR: smoothed
/// Add-one smoothing: each count plus one, divided by the sum of them all, so that
/// every outcome gets a probability above zero and the probabilities sum to one: `p_i
/// = (c_i + 1) / (sum_j c_j + n)`.
///
/// # Shapes
/// `counts`: `[n]` → `[n]`.
pub fn smoothed(counts: &[u64]) -> Vec<f64> {
    let total: u64 = counts.iter().sum::<u64>() + counts.len() as u64;
    counts
        .iter()
        .map(|&c| (c + 1) as f64 / total as f64)
        .collect()
}
// ANCHOR_END: smoothed
