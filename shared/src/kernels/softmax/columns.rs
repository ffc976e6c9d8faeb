//! Softmax and log-softmax over a dim that is not the last: the values of one softmax lie
//! `inner` floats apart, and neighbouring softmaxes ("columns") lie next to each other.
//!
//! The tensor is seen as `[outer, n, inner]` with `n` the softmax dim. PyTorch computes W
//! neighbouring columns at once with vectors, and the columns left over one at a time with
//! scalar code, which calls the C library's `expf` instead of the vector `exp`. Which columns
//! are left over depends on how the work is cut into pieces, so we cut it the same way.
//!
//! Measured with the rest of `kernels::softmax` (see there).

use super::vector::{Vector, maximum};
use crate::kernels::vec_math::glibc_expf;

/// `softmax` over the middle dim of `[outer, n, inner]`.
///
/// PyTorch cuts the `outer · inner` columns into one contiguous piece per thread (even for a
/// tiny tensor). Inside a piece, W columns that are neighbours in one row take the vector
/// path; the rest of a row, or of the piece, takes the scalar path.
///
/// # Shapes
/// `x` and `out`: `[outer · n · inner]`, row major; all sizes ≥ 1.
pub(crate) fn softmax(
    x: &[f32],
    out: &mut [f32],
    [outer, n, inner]: [usize; 3],
    v: Vector,
) {
    let total = outer * inner;
    let threads = crate::cpu::get_num_threads();
    let piece = if threads > 1 {
        total.div_ceil(threads)
    } else {
        total
    };
    let w = v.lanes;
    for begin in (0..total).step_by(piece) {
        let end = (begin + piece).min(total);
        let mut idx = begin;
        while idx < end {
            let (o, i) = (idx / inner, idx % inner);
            let start = o * n * inner + i;
            let vector = i + w <= inner && idx + w <= end;
            // Otherwise the scalar path takes the columns up to the end of the piece or of
            // the row, whichever comes first.
            let count = if vector {
                w
            } else {
                (end - idx).min(inner - i)
            };
            for j in 0..count {
                if vector {
                    vector_column(x, out, start + j, n, inner, v);
                } else {
                    scalar_column(x, out, start + j, n, inner);
                }
            }
            idx += count;
        }
    }
}

/// One column on the vector path: NaN-propagating max, the vector `exp`, a running sum
/// from 0, and a true division.
fn vector_column(
    x: &[f32],
    out: &mut [f32],
    start: usize,
    n: usize,
    stride: usize,
    v: Vector,
) {
    let at = |d: usize| start + d * stride;
    let max = (1..n).fold(x[at(0)], |m, d| maximum(m, x[at(d)]));
    let mut sum = 0.0f32;
    for d in 0..n {
        out[at(d)] = (v.exp)(x[at(d)] - max);
        sum += out[at(d)];
    }
    for d in 0..n {
        out[at(d)] /= sum;
    }
}

/// One column on the scalar path: C++'s `std::max` (which keeps the first on a NaN), the C
/// library's `expf`, a running sum from 0, and a true division.
fn scalar_column(x: &[f32], out: &mut [f32], start: usize, n: usize, stride: usize) {
    let at = |d: usize| start + d * stride;
    let max = (1..n).fold(x[at(0)], |m, d| if m < x[at(d)] { x[at(d)] } else { m });
    let mut sum = 0.0f32;
    for d in 0..n {
        out[at(d)] = glibc_expf(x[at(d)] - max);
        sum += out[at(d)];
    }
    for d in 0..n {
        out[at(d)] /= sum;
    }
}

/// `log_softmax` over the middle dim of `[outer, n, inner]`.
///
/// PyTorch walks each row of columns in chunks of about 128 KiB of input (a multiple of W
/// columns); in a chunk, the last `size mod W` columns take the C library's `expf`. The
/// thread count does not change the result.
///
/// # Shapes
/// `x` and `out`: `[outer · n · inner]`, row major; all sizes ≥ 1.
pub(crate) fn log_softmax(
    x: &[f32],
    out: &mut [f32],
    [outer, n, inner]: [usize; 3],
    v: Vector,
) {
    let w = v.lanes;
    let chunk = ((128 * 1024 / n / size_of::<f32>()).max(w) / w * w).min(inner);
    for o in 0..outer {
        for chunk_start in (0..inner).step_by(chunk) {
            let size = chunk.min(inner - chunk_start);
            let vector_columns = size - size % w;
            for c in 0..size {
                let start = o * n * inner + chunk_start + c;
                let at = |d: usize| start + d * inner;
                // `x > max ? x : max` from −∞: a NaN never becomes the max (the sum below
                // turns the column into NaN anyway).
                let max = (0..n).fold(f32::NEG_INFINITY, |m, d| {
                    if x[at(d)] > m { x[at(d)] } else { m }
                });
                let exp = if c < vector_columns {
                    v.exp
                } else {
                    glibc_expf
                };
                let sum = (0..n).fold(0.0f32, |s, d| s + exp(x[at(d)] - max));
                // Every column's log is the vector `log`, the leftover columns' too.
                let log_sum = (v.log)(sum);
                for d in 0..n {
                    out[at(d)] = (x[at(d)] - max) - log_sum;
                }
            }
        }
    }
}
