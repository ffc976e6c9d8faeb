//! Exercise (predict): which gradients of the causal attention scores are exactly zero?
//! Change the body; test with `cargo test -p ch10-backward --features exercise
//! zero_score_grads`.

use ch05_causal::causal_mask;
use shared::Tensor;

/// `true` where the gradient of the causal attention scores is exactly zero, for any input
/// and any loss.
///
/// # Shapes
/// Returns `[num_tokens, num_tokens]`.
pub fn zero_score_grads(num_tokens: usize) -> Tensor<bool> {
    // TODO: the masked scores above the diagonal are the obvious ones. Is that all? Think
    // about a query that can see only one key: what is the softmax of a single score,
    // and how does it change when that score changes?
    causal_mask(num_tokens)
}
