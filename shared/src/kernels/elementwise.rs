//! ATen's vectorised elementwise loop (`cpu_kernel_vec`), for the kernels whose vector
//! blocks and scalar tail compute differently (GELU's and SiLU's, forward and backward).
//!
//! A tensor is cut into ranges, one per thread (the kernel decides where: [`gelu_ranges`],
//! [`silu_ranges`]). Each range is walked in blocks of two vectors,
//! computed by the SLEEF function of the vector code, and ends with a tail of fewer than
//! two vectors, computed by the C library's function; so where a range ends decides which
//! elements take which function, and the ranges follow PyTorch's thread count
//! ([`crate::cpu::get_num_threads`]). Here the ranges run on the threads of the pool,
//! which changes nothing in any result, and the blocks in vector lanes
//! ([`super::lanes`]), which changes nothing either.
//!
//! [`gelu_ranges`]: super::gelu::gelu_ranges
//! [`silu_ranges`]: super::silu::silu_ranges

use std::ops::Range;

use rayon::prelude::*;

use super::lanes::{map_in_lanes, zip_in_lanes};

/// ATen's `parallel_for` cut of `n` elements: as many equal ranges as there are `threads`,
/// but no more than there are whole or partial `grain`s (at least one range of a non-empty
/// tensor; none of an empty one).
pub(crate) fn ranges(n: usize, threads: usize, grain: usize) -> Vec<Range<usize>> {
    let tasks = threads.max(1).min(n.div_ceil(grain)).max(1);
    let chunk = n.div_ceil(tasks).max(1);
    (0..n)
        .step_by(chunk)
        .map(|start| start..(start + chunk).min(n))
        .collect()
}

/// One range of the loop, in place: whole blocks of `block` elements take `vector` (run in
/// vector lanes: see [`super::lanes`]), the leftover tail takes `scalar`.
///
/// # Shapes
/// `xs`: one range, any length; `block` ≥ 1.
pub(crate) fn blocks_and_tail(
    xs: &mut [f32],
    block: usize,
    vector: impl Fn(f32) -> f32,
    scalar: impl Fn(f32) -> f32,
) {
    let whole = xs.len() / block * block;
    let (body, tail) = xs.split_at_mut(whole);
    map_in_lanes(body, vector);
    tail.iter_mut().for_each(|x| *x = scalar(*x));
}

/// [`blocks_and_tail`] on each of `ranges` of `values`, in place, the ranges on the pool's
/// threads.
///
/// # Shapes
/// `values`: any length; `ranges`: adjacent, in order, within it.
pub(crate) fn in_ranges(
    values: &mut [f32],
    ranges: &[Range<usize>],
    block: usize,
    vector: impl Fn(f32) -> f32 + Sync + Copy,
    scalar: impl Fn(f32) -> f32 + Sync + Copy,
) {
    pieces(values, ranges)
        .into_par_iter()
        .for_each(|(_, xs)| blocks_and_tail(xs, block, vector, scalar));
}

/// The loop over two inputs to a new output (a backward's `x` and `grad_y`):
/// `out[i] = vector(x[i], y[i])` on the whole blocks of `block` elements of each of
/// `ranges`, `scalar(x[i], y[i])` on each range's tail; the ranges on the pool's threads,
/// the blocks in vector lanes (so `vector` should have no branch and be
/// `#[inline(always)]`, a closure too, to be compiled into the loop that runs the lanes;
/// it gives the same bits either way).
///
/// # Shapes
/// `x`, `y`: the same length; `ranges`: adjacent, in order, within it; `block` ≥ 1.
/// Returns `x`'s length (elements outside every range are 0).
pub fn zip_in_ranges(
    x: &[f32],
    y: &[f32],
    ranges: &[Range<usize>],
    block: usize,
    vector: impl Fn(f32, f32) -> f32 + Sync + Copy,
    scalar: impl Fn(f32, f32) -> f32 + Sync + Copy,
) -> Vec<f32> {
    assert_eq!(
        x.len(),
        y.len(),
        "zip_in_ranges: two inputs of different lengths"
    );
    let mut out = vec![0.0f32; x.len()];
    pieces(&mut out, ranges)
        .into_par_iter()
        .for_each(|(range, out)| {
            let (x, y) = (&x[range.clone()], &y[range]);
            let whole = out.len() / block * block;
            zip_in_lanes(&x[..whole], &y[..whole], &mut out[..whole], vector);
            for ((o, &x), &y) in
                out[whole..].iter_mut().zip(&x[whole..]).zip(&y[whole..])
            {
                *o = scalar(x, y);
            }
        });
    out
}

/// `values` cut into its `ranges`, each piece with its range.
fn pieces<'a>(
    values: &'a mut [f32],
    ranges: &[Range<usize>],
) -> Vec<(Range<usize>, &'a mut [f32])> {
    let mut rest = values;
    let mut start = 0;
    let mut pieces = Vec::with_capacity(ranges.len());
    for range in ranges {
        let (_, from) = std::mem::take(&mut rest).split_at_mut(range.start - start);
        let (piece, after) = from.split_at_mut(range.len());
        pieces.push((range.clone(), piece));
        rest = after;
        start = range.end;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::parallel::on;

    #[test]
    fn each_range_has_its_blocks_and_its_own_tail() {
        // Two ranges of 37 and 35 elements in blocks of 16: elements 32..37 and 69..72
        // are tails, whatever the pool's threads.
        let ranges = [0..37, 37..72];
        let x: Vec<f32> = (0..72).map(|i| i as f32).collect();
        let tail = |i: usize| (32..37).contains(&i) || (69..72).contains(&i);
        for threads in [1, 2, 3] {
            on(threads, || {
                let mut values = x.clone();
                in_ranges(&mut values, &ranges, 16, |v| v + 0.5, |v| -v);
                let zipped =
                    zip_in_ranges(&x, &x, &ranges, 16, |a, b| a + b, |a, _| -a);
                for (i, (&v, &z)) in values.iter().zip(&zipped).enumerate() {
                    let (expected, doubled) = if tail(i) {
                        (-(i as f32), -(i as f32))
                    } else {
                        (i as f32 + 0.5, 2.0 * i as f32)
                    };
                    assert_eq!(
                        (v, z),
                        (expected, doubled),
                        "element {i}, {threads} threads"
                    );
                }
            });
        }
    }
}
