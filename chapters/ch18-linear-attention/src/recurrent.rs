//! Causal linear attention, recurrent form: one token at a time, with a state of fixed size.
//!
//! Row `i` of the parallel form is `Σ_{j≤i} (φ(q_i)·φ(k_j)) v_jᵀ = φ(q_i)ᵀ Σ_{j≤i} φ(k_j) v_jᵀ`:
//! the query comes out of the sum. What is left, `S_i = Σ_{j≤i} φ(k_j) v_jᵀ`, is a `d × d_v`
//! matrix that grows by one outer product per token, `S_i = S_{i-1} + φ(k_i) v_iᵀ`, and the
//! normaliser is `φ(q_i)·z_i` with `z_i = z_{i-1} + φ(k_i)`. Generating a token reads and
//! updates `S` and `z`: no cache of keys and values.

use shared::{Tensor, stack, zeros};

use crate::feature_map::elu_plus_one;

/// Linear attention token by token: `S_t = S_{t-1} + φ(k_t) v_tᵀ`, `z_t = z_{t-1} + φ(k_t)`,
/// `o_t = φ(q_t)ᵀ S_t / φ(q_t)·z_t`.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`. Returns `[T, d_v]`.
// ANCHOR: linear_recurrent
pub fn linear_recurrent(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    let (fq, fk) = (elu_plus_one(q), elu_plus_one(k));
    let mut s = zeros(&[k.size(1), v.size(1)]);
    let mut z = zeros(&[k.size(1)]);
    let mut out = Vec::new();
    for t in 0..q.size(0) {
        s += fk.get(t).outer(&v.get(t));
        z += fk.get(t);
        let query = fq.get(t);
        out.push(query.matmul(&s) / query.matmul(&z));
    }
    stack(&out, 0)
}
// ANCHOR_END: linear_recurrent
