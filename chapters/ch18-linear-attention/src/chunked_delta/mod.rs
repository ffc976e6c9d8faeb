//! Gated DeltaNet a chunk at a time: the WY / UT form.
//!
//! The delta rule's state is not a sum of outer products any more (each write reads the
//! state first), so the chunked form of linear attention does not apply as it is. Songlin
//! Yang ("DeltaNet Explained", parts I and II) unrolls the writes of one chunk: the `C`
//! corrections `u_i = β_i (v_i − S_{i-1} k_i)` depend on each other only through a
//! triangular system, `(I + A) U = diag(β) V − (decayed) diag(β) K S`, with
//! `A_ij = β_i (k_i·k_j) α_{j+1}⋯α_i` for `j < i`. Its inverse `T = (I + A)⁻¹` (the UT
//! transform, found by forward substitution) turns the chunk's writes into two products,
//! `W = T diag(β) diag(e^G) K` and `U = T diag(β) V`, and then the outputs and the next state
//! come from `C × C` and `C × d` products, as in the chunked form of linear attention.
//!
//! The state is kept here as `Sᵀ`, `[d_k, d_v]` (a row per key feature), as the chunked
//! kernels keep it.

use shared::{Tensor, cat, zeros};

use crate::gates::{cumsum, exp};

#[cfg_attr(feature = "exercise", path = "../../exercises/ut_transform.rs")]
mod ut;
pub use ut::ut_transform;

/// Gated DeltaNet's outputs a chunk of `chunk` tokens at a time; equal to
/// [`gated_delta_recurrent`](crate::gated_delta::gated_delta_recurrent) up to rounding.
///
/// # Shapes
/// `q`, `k`: `[T, d_k]` (unit-length rows), `v`: `[T, d_v]`, `log_alpha`, `beta`: `[T]`,
/// `chunk` ≥ 1. Returns `[T, d_v]`.
// ANCHOR: gated_delta_chunked
pub fn gated_delta_chunked(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    log_alpha: &Tensor,
    beta: &Tensor,
    chunk: usize,
) -> Tensor {
    let (qs, ks, vs) = (q.split(chunk, 0), k.split(chunk, 0), v.split(chunk, 0));
    let (gs, bs) = (log_alpha.split(chunk, 0), beta.split(chunk, 0));
    let mut s = zeros(&[k.size(1), v.size(1)]);
    let mut out = Vec::new();
    for c in 0..qs.len() {
        let (qc, kc, vc, bc) = (&qs[c], &ks[c], &vs[c], &bs[c]);
        // G_i: the log of the decay from the chunk's start to token i.
        let g = cumsum(&gs[c]);
        let decay = exp(&(g.unsqueeze(1) - g.unsqueeze(0))).tril(0);
        let t_inv = ut_transform(&(kc * bc.unsqueeze(1)), kc, &decay);
        let w = t_inv.matmul(&(kc * (bc * exp(&g)).unsqueeze(1)));
        let u = t_inv.matmul(&(vc * bc.unsqueeze(1)));
        // What each token writes once the state of the chunks before is read.
        let v_new = u - w.matmul(&s);
        let inner = (qc.matmul(&kc.t()) * &decay).tril(0);
        out.push((qc * exp(&g).unsqueeze(1)).matmul(&s) + inner.matmul(&v_new));
        let g_last = g.get(-1);
        let to_end = exp(&(&g_last - &g)).unsqueeze(1);
        s = exp(&g_last).item() * s + (kc * to_end).t().matmul(&v_new);
    }
    cat(&out, 0)
}
// ANCHOR_END: gated_delta_chunked
