//! Elementwise loops run 16 elements at a time, every element by the same scalar steps.
//!
//! A loop of one float in, one float out is what the compiler turns into vector
//! instructions by itself, if two things hold: the steps have no branch (a `select` in
//! each lane replaces an `if`), and the loop is compiled for the vector unit, since the
//! workspace's baseline x86-64 has neither 512-bit vectors nor the fused multiply-add
//! (without it each `mul_add` is a call to the C library's `fmaf`). So the loops here run
//! inside [`with_isa`], compiled for the best instruction set this processor has, and walk
//! their slices in chunks of 16, AVX-512's vector (two of AVX2's). The step `f` has to be
//! compiled into that loop, so it is marked `#[inline(always)]`, a closure too
//! (`#[inline(always)] |x| …`), as is everything it calls: a step that stays a function of
//! its own is compiled for the baseline processor, one element at a time.
//!
//! Nothing is reordered: each element is computed by `f` alone, and an `f32` operation
//! rounds the same whether it runs in a lane or on its own, and a fused multiply-add the
//! same whether it is an instruction or `fmaf`. So the results are `f`'s, bit for bit; the
//! instruction set decides only the speed. (It is not [`crate::cpu::Capability`], the
//! PyTorch build whose order of arithmetic `f` follows.)

use crate::simd::{Isa, Simd, SimdOp, with_isa};

/// Elements per step of the loops: one AVX-512 vector.
const LANES: usize = 16;

/// `xs[i] = f(xs[i])` for every `i`, in vector lanes. `f` should have no branch and be
/// inlined (see the [module docs](self)); it gives the same bits either way.
///
/// # Shapes
/// `xs`: any length.
pub(crate) fn map_in_lanes(xs: &mut [f32], f: impl Fn(f32) -> f32) {
    with_isa(Isa::detect(), MapInLanes { xs, f });
}

/// `out[i] = f(x[i], y[i])` for every `i`, in vector lanes, as [`map_in_lanes`].
///
/// # Shapes
/// `x`, `y`, `out`: the same length.
pub(crate) fn zip_in_lanes(
    x: &[f32],
    y: &[f32],
    out: &mut [f32],
    f: impl Fn(f32, f32) -> f32,
) {
    assert!(
        x.len() == out.len() && y.len() == out.len(),
        "zip_in_lanes: inputs of {} and {} elements for an output of {}",
        x.len(),
        y.len(),
        out.len()
    );
    with_isa(Isa::detect(), ZipInLanes { x, y, out, f });
}

/// `f()` compiled for the best instruction set this processor has, as the loops here: its
/// `mul_add`s are fused multiply-add instructions rather than calls to the C library's
/// `fmaf` (the same bits), and its loops of independent elements may run in vector lanes.
/// `f` should be an `#[inline(always)]` closure, and so should everything it calls (see the
/// comments of this module); it gives the same bits either way.
pub fn compiled_for_this_processor<R>(f: impl FnOnce() -> R) -> R {
    with_isa(Isa::detect(), Compiled(f))
}

/// [`compiled_for_this_processor`] as an operation for [`with_isa`].
struct Compiled<F>(F);

impl<R, F: FnOnce() -> R> SimdOp for Compiled<F> {
    type Output = R;

    #[inline(always)]
    fn run<S: Simd>(self, _simd: S) -> R {
        (self.0)()
    }
}

/// [`map_in_lanes`] as an operation for [`with_isa`].
struct MapInLanes<'a, F> {
    xs: &'a mut [f32],
    f: F,
}

impl<F: Fn(f32) -> f32> SimdOp for MapInLanes<'_, F> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, _simd: S) {
        let mut chunks = self.xs.chunks_exact_mut(LANES);
        for chunk in &mut chunks {
            for x in chunk {
                *x = (self.f)(*x);
            }
        }
        for x in chunks.into_remainder() {
            *x = (self.f)(*x);
        }
    }
}

/// [`zip_in_lanes`] as an operation for [`with_isa`].
struct ZipInLanes<'a, F> {
    x: &'a [f32],
    y: &'a [f32],
    out: &'a mut [f32],
    f: F,
}

impl<F: Fn(f32, f32) -> f32> SimdOp for ZipInLanes<'_, F> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, _simd: S) {
        let mut chunks = self.out.chunks_exact_mut(LANES);
        let mut xs = self.x.chunks_exact(LANES);
        let mut ys = self.y.chunks_exact(LANES);
        for ((out, x), y) in (&mut chunks).zip(&mut xs).zip(&mut ys) {
            for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
                *o = (self.f)(x, y);
            }
        }
        let rest = chunks.into_remainder().iter_mut();
        for ((o, &x), &y) in rest.zip(xs.remainder()).zip(ys.remainder()) {
            *o = (self.f)(x, y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_the_step_of_its_own_inputs() {
        // Lengths around a whole number of chunks, so that the remainders are exercised.
        for len in [0, 1, 15, 16, 17, 33, 100] {
            let x: Vec<f32> = (0..len).map(|i| i as f32 * 0.75 - 3.0).collect();
            let y: Vec<f32> = (0..len).map(|i| (i * i) as f32).collect();
            let mut mapped = x.clone();
            map_in_lanes(&mut mapped, |v| v.mul_add(2.0, 1.0));
            let expected: Vec<f32> = x.iter().map(|v| v.mul_add(2.0, 1.0)).collect();
            assert_eq!(mapped, expected, "map, {len} elements");
            let mut zipped = vec![f32::NAN; len];
            zip_in_lanes(&x, &y, &mut zipped, |a, b| a - b);
            let expected: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
            assert_eq!(zipped, expected, "zip, {len} elements");
        }
    }
}
