//! Causal linear attention, chunked form: parallel inside a chunk, recurrent across chunks.
//!
//! The recurrent form reads and writes the whole state once per token, a long chain of small
//! steps; the parallel form does `T²` work. Cut the sequence into chunks of `C` tokens: a
//! query sees the earlier chunks through the state they left, `φ(Q_c) S`, and its own chunk
//! through a `C × C` masked product as in the parallel form; then the chunk's keys and
//! values join the state at once, `S += φ(K_c)ᵀ V_c`. This is how linear-attention layers
//! are trained.

use shared::{Tensor, cat, zeros};

use crate::feature_map::elu_plus_one;
use crate::parallel::causal_ones;

/// Linear attention a chunk of `chunk` tokens at a time.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`, `chunk` ≥ 1 (the last chunk may be shorter).
/// Returns `[T, d_v]`.
// ANCHOR: linear_chunked
pub fn linear_chunked(q: &Tensor, k: &Tensor, v: &Tensor, chunk: usize) -> Tensor {
    let (fq, fk) = (elu_plus_one(q), elu_plus_one(k));
    let mut s = zeros(&[k.size(1), v.size(1)]);
    let mut z = zeros(&[k.size(1)]);
    let mut out = Vec::new();
    for ((qc, kc), vc) in fq
        .split(chunk, 0)
        .iter()
        .zip(fk.split(chunk, 0))
        .zip(v.split(chunk, 0))
    {
        let weights = qc.matmul(&kc.t()) * causal_ones(qc.size(0));
        let numerator = qc.matmul(&s) + weights.matmul(&vc);
        let denominator = qc.matmul(&z) + weights.sum_dim(-1, false);
        out.push(numerator / denominator.unsqueeze(1));
        s += kc.t().matmul(&vc);
        z += kc.sum_dim(0, false);
    }
    cat(&out, 0)
}
// ANCHOR_END: linear_chunked
