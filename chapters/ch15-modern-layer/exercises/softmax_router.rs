//! Exercise: Qwen3's router. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise route_softmax_top_k`.

use crate::moe::Route;
use shared::Tensor;

/// Qwen3's route: the softmax of every token's logits over the experts, the `k` largest
/// probabilities kept (their experts from the likeliest down) and divided by their sum,
/// so that a token's weights add up to 1.
///
/// # Shapes
/// `logits`: `[tokens, n_experts]`. Returns a route of `[tokens, k]`.
pub fn route_softmax_top_k(logits: &Tensor, k: usize) -> Route {
    // TODO: for every token, its k likeliest experts (likeliest first) and their
    // probabilities renormalised over those k. Before you write it: is that the softmax
    // of the k largest logits alone, as gpt-oss computes it?
    let _ = (logits, k);
    todo!("route_softmax_top_k")
}
