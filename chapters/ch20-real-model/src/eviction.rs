//! What a sliding window throws away: the share of each head's attention that lands on the
//! keys chapter 15's window evicts from the cache, with or without StreamingLLM's sink
//! tokens kept (Xiao et al., 2023).

use ch15_modern_layer::attention::sees;
use shared::Tensor;

/// The mean weight each head's queries give to the keys a window of `window` keys with
/// `sink_tokens` sinks would evict (chapter 15's [`sees`] says which it keeps), over every
/// sequence and every query.
///
/// # Shapes
/// `weights`: `[batch, heads, tokens, tokens]`, causal. Returns one share per head.
pub fn evicted_share(
    weights: &Tensor,
    window: usize,
    sink_tokens: usize,
) -> Vec<f64> {
    let [batch, heads, tokens, _] = weights.sizes()[..] else {
        panic!("evicted_share: weights must be [batch, heads, tokens, tokens]");
    };
    let w = weights.to_vec();
    (0..heads)
        .map(|h| {
            let mut sum = 0.0;
            for b in 0..batch {
                for query in 0..tokens {
                    let row =
                        &w[((b * heads + h) * tokens + query) * tokens..][..tokens];
                    for (key, &weight) in row.iter().enumerate().take(query + 1) {
                        if !sees(query, key, Some(window), sink_tokens) {
                            sum += f64::from(weight);
                        }
                    }
                }
            }
            sum / (batch * tokens) as f64
        })
        .collect()
}
