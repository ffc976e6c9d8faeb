//! Softmax and log-softmax over the last dim: each row is contiguous in memory, and PyTorch
//! handles it with whole vectors (a partial vector for the last few elements).
//!
//! Measured with the rest of `kernels::softmax` (see there).

use super::vector::{Vector, add, maximum};

/// `softmax` of every row of length `n`, from `x` into `out`.
///
/// # Shapes
/// `x` and `out`: `[rows · n]`, row after row; `n ≥ 1`.
pub(crate) fn softmax(x: &[f32], out: &mut [f32], n: usize, v: Vector) {
    // Rows are independent: blocks of them on the pool's threads, the same bits.
    super::super::parallel::by_rows(x, out, n, |x, out| softmax_rows(x, out, n, v));
}

/// [`softmax`] of the rows of `x`, one after the other.
fn softmax_rows(x: &[f32], out: &mut [f32], n: usize, v: Vector) {
    for (row, out) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        let max = v.reduce_all(row, maximum);
        (v.exp_shifted)(row, max, out);
        let sum = v.reduce_all(out, add);
        // One division, then a multiplication per element: faster than n divisions, and
        // the reason PyTorch's weights can differ in the last bit from `e / sum`.
        let inverse = 1.0 / sum;
        for o in out.iter_mut() {
            *o *= inverse;
        }
    }
}

/// `log_softmax` of every row of length `n`: `(x − max) − ln Σ exp(x − max)`.
///
/// # Shapes
/// `x` and `out`: `[rows · n]`, row after row; `n ≥ 1`.
pub(crate) fn log_softmax(x: &[f32], out: &mut [f32], n: usize, v: Vector) {
    for (row, out) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        let max = v.reduce_all(row, maximum);
        // The exponentials are only needed for their sum; `out` holds them meanwhile.
        (v.exp_shifted)(row, max, out);
        let log_sum = (v.log)(v.reduce_all(out, add));
        // Two subtractions in this order: `x − (max + log_sum)` would round `max + log_sum`
        // first and lose the small differences between large scores.
        for (o, &x) in out.iter_mut().zip(row) {
            *o = (x - max) - log_sum;
        }
    }
}
