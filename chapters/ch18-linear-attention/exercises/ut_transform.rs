//! Exercise: the UT transform of the chunked Gated DeltaNet. Replace the `todo!()`; test
//! with `cargo test -p ch18-linear-attention --features exercise ut_transform`.

use shared::Tensor;

/// `T = (I + A)⁻¹` for `A` = the strictly lower part of `diag(β) K Kᵀ ⊙ decay`, by forward
/// substitution.
///
/// # Shapes
/// `k_beta`, `k`: `[C, d_k]` (`k_beta` = `diag(β) K`), `decay`: `[C, C]`. Returns `[C, C]`.
pub fn ut_transform(k_beta: &Tensor, k: &Tensor, decay: &Tensor) -> Tensor {
    // TODO: build A, the strictly lower triangle of (k_beta k^T) * decay. Then solve
    // T (I + A) = I one row at a time, from the top: row 0 of T is e_0; row i needs only
    // the rows above it. Before you write it, predict: what is T for C = 2?
    let _ = (k_beta, k, decay);
    todo!("ut_transform")
}
