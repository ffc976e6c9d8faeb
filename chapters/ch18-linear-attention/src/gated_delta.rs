//! Gated DeltaNet, token by token.
//!
//! `S_t = α_t S_{t-1} (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ`, `o_t = S_t q_t`: decay the state by
//! `α_t`, then one delta-rule write of `v_t` under `k_t`, then read it with the query. The
//! state is `d_v × d_k` whatever the length of the text.
//!
//! A layer of Qwen3-Next or Qwen3.5 wraps this core in more: projections of the layer's
//! input to `q`, `k`, `v`, `α`, `β`, a short causal convolution over the last four tokens,
//! an RMSNorm of the output and an output gate ([`crate::gated_layer`]), and several heads.

use shared::{Tensor, stack, zeros};

use crate::delta::delta_write;

/// Gated DeltaNet's outputs, one token at a time.
///
/// # Shapes
/// `q`, `k`: `[T, d_k]` (unit-length rows), `v`: `[T, d_v]`, `alpha`, `beta`: `[T]`.
/// Returns `[T, d_v]`.
// ANCHOR: gated_delta_recurrent
pub fn gated_delta_recurrent(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    alpha: &Tensor,
    beta: &Tensor,
) -> Tensor {
    let mut s = zeros(&[v.size(1), k.size(1)]);
    let mut out = Vec::new();
    for t in 0..q.size(0) {
        s = alpha.get(t).item() * s;
        s = delta_write(&s, &k.get(t), &v.get(t), beta.get(t).item());
        out.push(s.matmul(&q.get(t)));
    }
    stack(&out, 0)
}
// ANCHOR_END: gated_delta_recurrent
