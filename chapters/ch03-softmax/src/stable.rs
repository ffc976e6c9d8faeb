//! The numerically stable softmax, along any dim: subtract the largest score first.
//!
//! `exp(x_i - m) / Σ_j exp(x_j - m) = exp(x_i) / Σ_j exp(x_j)` for any `m` (multiply top
//! and bottom by `exp(m)`). Taking `m = max_j x_j` makes every exponent at most 0, so
//! every `exp` lies in `(0, 1]` and the sum in `[1, n]`: nothing overflows, and the
//! largest score's term is exactly 1, so the sum is never 0 either.
//!
//! On a tensor with several dims, "the scores" are the lanes along `dim`: with `dim = -1`
//! each row of a `[queries, keys]` matrix is normalised on its own. `keepdim = true` keeps
//! the reduced dim as size 1, so the row maxima `[n, 1]` and row sums `[n, 1]` broadcast
//! back against the `[n, m]` scores.

use shared::Tensor;

/// Softmax along `dim`, computed as `exp(x - max) / sum(exp(x - max))` with the max and the
/// sum taken along `dim`. Equals `x.softmax(dim)` (PyTorch's `torch.softmax`) up to the
/// last bits of rounding.
///
/// # Shapes
/// `x`: any shape with at least one dim, `dim` in `[-ndim, ndim)` (negative counts from
/// the end). Returns the shape of `x`; every lane along `dim` sums to 1.
// ANCHOR: softmax_stable
pub fn softmax_stable(x: &Tensor, dim: i64) -> Tensor {
    let (max, _indices) = x.max_dim(dim, true);
    let exp = (x - &max).exp();
    &exp / &exp.sum_dim(dim, true)
}
// ANCHOR_END: softmax_stable
