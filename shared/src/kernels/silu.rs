//! `F.silu` as ATen's CPU kernel computes it: `x / (1 + exp(-x))` through the vectorised
//! elementwise loop (`cpu_kernel_vec`). A contiguous tensor is cut into one range per
//! thread ([`silu_ranges`]); each range runs in blocks of two vectors, whose `exp` is
//! SLEEF's `expf_u10`, and ends with a tail of fewer than two vectors, whose `exp` is the
//! C library's `expf` (which Rust's `f32::exp` calls on Linux). A tensor that is not
//! contiguous takes the scalar form throughout. The ranges run on the pool's threads and
//! the blocks in vector lanes ([`super::elementwise`]), which changes no bit.
//! Measured against PyTorch 2.13.0's `F.silu` with its AVX2 kernels on two threads: the
//! same bits for every length from 1 to 69 and for 100, 1000, 40 000 and 70 001 elements
//! (the last two split between the threads). The AVX-512 kernels differ only in the width
//! of the blocks, which `isa` sets; the chapters' tensors are whole blocks either way.

use std::ops::Range;

use super::elementwise::{in_ranges, ranges};
use super::gelu::Width;
use super::parallel::GRAIN;
use super::vec_math::expf_u10_steps;

/// How SiLU's kernels (forward and backward) cut `n` elements between `threads` threads:
/// ATen's rule for an elementwise loop, one range per thread, but never a range of less
/// than a grain (ATen's 32768), so that a smaller tensor is one range.
pub fn silu_ranges(n: usize, threads: usize) -> Vec<Range<usize>> {
    ranges(n, threads, GRAIN)
}

/// `x / (1 + exp(-x))` on contiguous `values`, in place, in ATen's ranges and blocks for
/// instruction set `isa` and `threads` threads.
pub(crate) fn silu_contiguous(values: &mut [f32], isa: Width, threads: usize) {
    let ranges = silu_ranges(values.len(), threads);
    in_ranges(values, &ranges, 2 * isa.lanes(), silu_vector, silu_scalar);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tensor_is_cut_only_past_a_grain() {
        assert_eq!(silu_ranges(GRAIN, 2), vec![0..GRAIN]);
        assert_eq!(silu_ranges(GRAIN + 1, 2), vec![0..16385, 16385..32769]);
        assert_eq!(silu_ranges(70_001, 2), vec![0..35001, 35001..70001]);
        assert_eq!(
            silu_ranges(3 * GRAIN, 4),
            vec![0..GRAIN, GRAIN..65536, 65536..98304]
        );
        assert_eq!(silu_ranges(70_001, 1), vec![0..70_001]);
        assert_eq!(silu_ranges(0, 2), Vec::<Range<usize>>::new());
    }
}
