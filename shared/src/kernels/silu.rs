//! `F.silu` as ATen's CPU kernel computes it: `x / (1 + exp(-x))` through the vectorised
//! elementwise loop (`cpu_kernel_vec`). A contiguous tensor is cut into one range per
//! thread (ATen's grain of 32768 elements: a smaller tensor is one range); each range runs
//! in blocks of two vectors, whose `exp` is SLEEF's `expf_u10`, and ends with a tail of
//! fewer than two vectors, whose `exp` is the C library's `expf` (which Rust's `f32::exp`
//! calls on Linux). A tensor that is not contiguous takes the scalar form throughout. The
//! ranges run on the pool's threads and the blocks in vector lanes
//! ([`super::elementwise`]), which changes no bit.
//! Measured against PyTorch 2.13.0's `F.silu` with its AVX2 kernels on two threads: the
//! same bits for every length from 1 to 69 and for 100, 1000, 40 000 and 70 001 elements
//! (the last two split between the threads). The AVX-512 kernels differ only in the width
//! of the blocks, which `isa` sets; the chapters' tensors are whole blocks either way.

use rayon::prelude::*;

use super::elementwise::blocks_and_tail;
use super::gelu::Width;
use super::vec_math::expf_u10_steps;

/// ATen's grain: ranges of at most this many elements are never split between threads.
const GRAIN: usize = 32768;

/// `x / (1 + exp(-x))` on contiguous `values`, in place, in ATen's ranges and blocks for
/// instruction set `isa` and `threads` threads.
pub(crate) fn silu_contiguous(values: &mut [f32], isa: Width, threads: usize) {
    let n = values.len();
    if n == 0 {
        return;
    }
    let tasks = threads.max(1).min(n.div_ceil(GRAIN));
    let chunk = n.div_ceil(tasks);
    values.par_chunks_mut(chunk).for_each(|range| {
        blocks_and_tail(range, 2 * isa.lanes(), silu_vector, silu_scalar)
    });
}

/// One element of a whole block: SLEEF's `exp` (its steps, without the check for fused
/// multiply-adds that [`super::vec_math::expf_u10`] makes at each call: the block's loop
/// is compiled with them).
#[inline(always)]
fn silu_vector(x: f32) -> f32 {
    x / (1.0 + expf_u10_steps(-x))
}

/// One element of a tail, or of a tensor that is not contiguous: the C library's `exp`.
pub(crate) fn silu_scalar(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}
