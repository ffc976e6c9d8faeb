//! Finding the sink: how much of each head's attention lands on the first token.

use shared::Tensor;

/// The mean weight each head's queries give to key 0, over every sequence and every query
/// but the first (which can look nowhere else).
///
/// # Shapes
/// `weights`: `[batch, heads, tokens, tokens]`, `tokens >= 2`. Returns one share per head.
// ANCHOR: sink_share
pub fn sink_share(weights: &Tensor) -> Vec<f64> {
    let [batch, heads, tokens, _] = weights.sizes()[..] else {
        panic!("sink_share: weights must be [batch, heads, tokens, tokens]");
    };
    let w = weights.to_vec();
    (0..heads)
        .map(|h| {
            let mut sum = 0.0;
            for b in 0..batch {
                for query in 1..tokens {
                    sum += f64::from(w[((b * heads + h) * tokens + query) * tokens]);
                }
            }
            sum / (batch * (tokens - 1)) as f64
        })
        .collect()
}
// ANCHOR_END: sink_share
