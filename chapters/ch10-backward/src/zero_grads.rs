//! Which gradients of the scores are exactly zero under a causal mask (an exploration).
//!
//! Above the diagonal the scores were replaced by `-inf`: constants, so their gradient is
//! 0. And one more: query 0 sees only key 0, so its weight is `softmax` of a single score,
//! always exactly 1, whatever that score is. A score that cannot change its weight gets no
//! gradient: `dS[0, 0] = P[0,0]·(dP[0,0] − dP[0,0]·P[0,0]) = 1·(dP[0,0] − dP[0,0]) = 0`.

use ch05_causal::causal_mask;
use shared::Tensor;

/// `true` where the gradient of the causal attention scores is exactly zero, for any input
/// and any loss: the future (above the diagonal), and the first query's only score.
///
/// # Shapes
/// Returns `[num_tokens, num_tokens]`.
// ANCHOR: zero_score_grads
pub fn zero_score_grads(num_tokens: usize) -> Tensor<bool> {
    let mut zero = causal_mask(num_tokens).to_vec();
    if num_tokens > 0 {
        zero[0] = true;
    }
    Tensor::from_vec(zero, &[num_tokens, num_tokens])
}
// ANCHOR_END: zero_score_grads
