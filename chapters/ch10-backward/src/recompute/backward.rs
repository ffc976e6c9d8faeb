//! The attention backward from the log-sum-exp (an exercise): see [`crate::recompute`].
//!
//! `P_ij = exp(S_ij − lse_i)` rebuilds the weights, and the softmax backward's row sum
//! `rowsum(dP ∘ P)` comes from the output instead of `P`:
//! `Σ_j P_ij (dO_i · V_j) = dO_i · Σ_j P_ij V_j = dO_i · O_i`, so `D = rowsum(dO ∘ O)`.

use shared::Tensor;

use crate::attention::AttentionGrads;
use crate::recompute::scaled_scores;

/// The gradients of the queries, keys and values of [`attention_forward_lse`], from its
/// inputs, its output `out`, its `lse` and the gradient of the output, rebuilding `P`
/// instead of reading it from a tape.
///
/// [`attention_forward_lse`]: crate::recompute::attention_forward_lse
///
/// # Shapes
/// `queries`, `keys`: `[.., n, d]`, `values`, `out`, `grad_out`: `[.., n, d_v]`, `lse`:
/// `[.., n, 1]`. Returns the shapes of `queries`, `keys` and `values`.
pub fn backward_from_lse(
    (queries, keys, values): (&Tensor, &Tensor, &Tensor),
    (out, lse): (&Tensor, &Tensor),
    grad_out: &Tensor,
    causal: bool,
) -> AttentionGrads {
    let scale = (queries.size(-1) as f32).sqrt();
    let weights = (&scaled_scores(queries, keys, causal) - lse).exp(); // P, rebuilt
    let grad_values = weights.transpose(-2, -1).matmul(grad_out); // dV = Pᵀ dO
    let grad_weights = grad_out.matmul(&values.transpose(-2, -1)); // dP = dO Vᵀ
    let d = (grad_out * out).sum_dim(-1, true); // D = rowsum(dO ∘ O)
    let grad_scores = &weights * &(&grad_weights - &d); // dS = P ∘ (dP − D)
    AttentionGrads {
        queries: &grad_scores.matmul(keys) / scale, // dQ = dS K / √d
        keys: &grad_scores.transpose(-2, -1).matmul(queries) / scale, // dK = dSᵀ Q / √d
        values: grad_values,
    }
}
