//! Causal linear attention, parallel form: every weight at once, as softmax attention.
//!
//! `O = ((φ(Q) φ(K)ᵀ) ⊙ M) V`, each row divided by its sum, with `M` the causal matrix of
//! ones (1 where the key is not in the future). The same `T × T` matrix of weights as in
//! chapter 5, only not exponentiated: this form costs `T²` like softmax attention.

use ch05_causal::mask::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use shared::Tensor;

use crate::feature_map::elu_plus_one;

/// Chapter 5's causal softmax attention, `softmax(mask(Q Kᵀ) / √d) V`: where linear
/// attention starts.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`. Returns `[T, d_v]`.
pub fn softmax_attention(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    let [t, d] = q.dims();
    masked_softmax(&q.matmul(&k.t()), &causal_mask(t), d).matmul(v)
}

/// The causal matrix of ones: `torch.tril(torch.ones(t, t))`.
///
/// # Shapes
/// Returns `[t, t]`.
pub fn causal_ones(t: usize) -> Tensor {
    shared::ones(&[t, t]).tril(0)
}

/// Linear attention, every query at once: weights `φ(q_i)·φ(k_j)` for `j ≤ i`, each row
/// divided by its sum.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`. Returns `[T, d_v]`.
// ANCHOR: linear_parallel
pub fn linear_parallel(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    let (fq, fk) = (elu_plus_one(q), elu_plus_one(k));
    let weights = fq.matmul(&fk.t()) * causal_ones(q.size(0));
    weights.matmul(v) / weights.sum_dim(-1, true)
}
// ANCHOR_END: linear_parallel
