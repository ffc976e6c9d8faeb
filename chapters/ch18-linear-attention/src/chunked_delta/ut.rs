//! The UT transform: the inverse of a unit lower-triangular matrix, by forward
//! substitution.

use shared::{Tensor, eye};

/// `T = (I + A)⁻¹` for `A` = the strictly lower part of `diag(β) K Kᵀ ⊙ decay`, by forward
/// substitution: row `i` of `−A` gains `(−A)[i, :i] · (−A)[:i, :i]`, using the rows before
/// it, already final.
///
/// # Shapes
/// `k_beta`, `k`: `[C, d_k]` (`k_beta` = `diag(β) K`), `decay`: `[C, C]`. Returns `[C, C]`.
// ANCHOR: ut_transform
pub fn ut_transform(k_beta: &Tensor, k: &Tensor, decay: &Tensor) -> Tensor {
    let c = k.size(0);
    let mut a = -(k_beta.matmul(&k.t()) * decay).tril(-1);
    for i in 1..c {
        let row = a.get(i).slice(0, ..i);
        let above = a.slice(0, ..i).slice(1, ..i);
        let row = &row + row.matmul(&above);
        for (j, value) in row.to_vec().into_iter().enumerate() {
            a.set(&[i, j], value);
        }
    }
    a + eye(c)
}
// ANCHOR_END: ut_transform
