//! The portable token: 4 lanes as a plain array, for every CPU.

use super::exp2::exp2_flushed_scalar;
use super::{Isa, Simd};

/// Any CPU: 4 lanes as an array; LLVM turns the short loops into SSE or NEON instructions
/// where it can.
#[derive(Clone, Copy, Debug, Default)]
pub struct Portable;

impl Portable {
    /// Applies `f` lane by lane.
    #[inline(always)]
    fn map2(a: [f32; 4], b: [f32; 4], f: impl Fn(f32, f32) -> f32) -> [f32; 4] {
        std::array::from_fn(|i| f(a[i], b[i]))
    }
}

impl Simd for Portable {
    type V = [f32; 4];
    const LANES: usize = 4;
    const ISA: Isa = Isa::Portable;

    #[inline(always)]
    fn splat(self, x: f32) -> [f32; 4] {
        [x; 4]
    }
    #[inline(always)]
    fn load(self, from: &[f32]) -> [f32; 4] {
        from[..4].try_into().expect("4 floats")
    }
    #[inline(always)]
    fn store(self, v: [f32; 4], to: &mut [f32]) {
        to[..4].copy_from_slice(&v);
    }
    #[inline(always)]
    fn add(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        Self::map2(a, b, |x, y| x + y)
    }
    #[inline(always)]
    fn sub(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        Self::map2(a, b, |x, y| x - y)
    }
    #[inline(always)]
    fn mul(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        Self::map2(a, b, |x, y| x * y)
    }
    #[inline(always)]
    fn mul_add(self, a: [f32; 4], b: [f32; 4], c: [f32; 4]) -> [f32; 4] {
        // Two roundings: `f32::mul_add` would be a library call without FMA hardware.
        std::array::from_fn(|i| a[i] * b[i] + c[i])
    }
    #[inline(always)]
    fn max(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        Self::map2(a, b, |x, y| if x > y { x } else { y })
    }
    #[inline(always)]
    fn reduce_max(self, v: [f32; 4]) -> f32 {
        let [a, b, c, d] = v;
        let ab = if a > b { a } else { b };
        let cd = if c > d { c } else { d };
        if ab > cd { ab } else { cd }
    }
    #[inline(always)]
    fn reduce_sum(self, v: [f32; 4]) -> f32 {
        (v[0] + v[2]) + (v[1] + v[3])
    }
    #[inline(always)]
    fn any_greater(self, v: [f32; 4], x: f32) -> bool {
        v.iter().any(|&lane| lane > x)
    }
    #[inline(always)]
    fn exp2_flushed(self, v: [f32; 4]) -> [f32; 4] {
        v.map(exp2_flushed_scalar)
    }
    #[inline(always)]
    fn hide_from(self, v: [f32; 4], first: usize, limit: usize) -> [f32; 4] {
        std::array::from_fn(|i| {
            if first + i >= limit {
                f32::NEG_INFINITY
            } else {
                v[i]
            }
        })
    }
    #[inline(always)]
    fn splat_pair(self, x: &[f32]) -> [f32; 4] {
        [x[0], x[1], x[0], x[1]]
    }
    #[inline(always)]
    fn add_pairs(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        [a[0] + a[1], a[2] + a[3], b[0] + b[1], b[2] + b[3]]
    }
    #[inline(always)]
    fn swap_keys(self, v: [f32; 4]) -> [f32; 4] {
        [v[2], v[3], v[0], v[1]]
    }
}
