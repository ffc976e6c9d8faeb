//! Exercise: linear attention, one token at a time. Replace the `todo!()`; test with
//! `cargo test -p ch18-linear-attention --features exercise linear_recurrent`.

use shared::Tensor;

/// Linear attention token by token: `S_t = S_{t-1} + φ(k_t) v_tᵀ`, `z_t = z_{t-1} + φ(k_t)`,
/// `o_t = φ(q_t)ᵀ S_t / φ(q_t)·z_t`.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`. Returns `[T, d_v]`.
pub fn linear_recurrent(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    // TODO: start from the parallel form, row i: Σ_{j≤i} (φ(q_i)·φ(k_j)) v_j, divided by
    // Σ_{j≤i} φ(q_i)·φ(k_j). Take φ(q_i) out of both sums: what is left is a d × d_v matrix
    // S and a d-vector z. Write how S and z change when token i arrives, then compute o_i
    // from them, for i = 0, 1, ... (φ is crate::feature_map::elu_plus_one).
    let _ = (q, k, v);
    todo!("linear_recurrent")
}
