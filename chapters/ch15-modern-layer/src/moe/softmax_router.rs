//! Qwen3's router: softmax, top-k, renormalised.

use crate::moe::Route;
use shared::Tensor;

/// Qwen3's route: the softmax of every token's logits over the experts, the `k` largest
/// probabilities kept (their experts from the likeliest down) and divided by their sum,
/// so that a token's weights add up to 1.
///
/// # Shapes
/// `logits`: `[tokens, n_experts]`. Returns a route of `[tokens, k]`.
// ANCHOR: route_softmax_top_k
pub fn route_softmax_top_k(logits: &Tensor, k: usize) -> Route {
    let probs = logits.softmax(-1);
    let (kept, experts) = probs.topk(k, -1, true, true);
    let weights = &kept / kept.sum_dim(-1, true);
    Route { experts, weights }
}
// ANCHOR_END: route_softmax_top_k
