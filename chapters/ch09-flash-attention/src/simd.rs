//! The dozen vector operations the kernel needs, for three kinds of vector unit.
//!
//! A first version of the kernel was plain Rust loops over fixed-size arrays, compiled
//! with AVX-512 enabled, hoping LLVM would vectorise them. The matrix products did
//! vectorise; the row maximum did not (LLVM turned it into 64 scalar `vmaxss`, or into
//! gathers across rows), and a bounds check in the scores loop made it load every key
//! four times. So the kernel names its vector operations explicitly, through the
//! [`Simd`] trait, and each implementation maps them onto one instruction set:
//!
//! - [`Avx512`]: 16 lanes (`std::arch` intrinsics, `__m512`);
//! - [`Avx2`]: 8 lanes (`__m256`, with FMA);
//! - [`Portable`]: 4 lanes as a plain array, for every other CPU (the compiler vectorises
//!   what it can).
//!
//! The x86 types are tokens: a value of [`Avx512`] can only be made by
//! [`Avx512::detect`], which checks the CPU, so every method can be safe. The kernel is
//! compiled once per instruction set with `#[target_feature]` (see
//! [`crate::kernel`]), and the methods, all `#[inline(always)]`, melt into it.
//!
//! [`Simd::exp`] repeats [`crate::exp::exp`] operation for operation: without fused
//! multiply-adds for [`Portable`] and [`Avx2`], which give the scalar results bit for bit
//! (a test checks it); with them, and with AVX-512's `vscalefps` for the `2ⁿ`, for
//! [`Avx512`] (five instructions fewer per 16 values, 5% of the kernel's time; a test
//! checks it is within 2 ulp too).

/// A vector of `LANES` floats and what the kernel does with it.
pub trait Simd: Copy + Send + Sync + 'static {
    /// The vector: `LANES` floats.
    type V: Copy;
    /// Floats per vector.
    const LANES: usize;

    /// Every lane `x`.
    fn splat(self, x: f32) -> Self::V;
    /// The first `LANES` floats of `from`.
    fn load(self, from: &[f32]) -> Self::V;
    /// Writes the lanes to the first `LANES` floats of `to`.
    fn store(self, v: Self::V, to: &mut [f32]);
    /// `a + b` lane by lane.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b` lane by lane.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b` lane by lane.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c` lane by lane, in one rounding where the CPU can.
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// The larger of `a` and `b` lane by lane.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// The largest lane.
    fn reduce_max(self, v: Self::V) -> f32;
    /// The sum of the lanes.
    fn reduce_sum(self, v: Self::V) -> f32;
    /// `exp` of every lane, by [`crate::exp::exp`]'s method: bit for bit its results
    /// ([`Portable`], [`Avx2`]), or within the same 2 ulp with fused multiply-adds
    /// ([`Avx512`]).
    fn exp(self, v: Self::V) -> Self::V;
    /// [`Simd::exp`], with every result below `f32::MIN_POSITIVE` made exactly 0 (the
    /// lanes below [`FLUSH_BELOW`]): the softmax weights. See [`exp_flushed_scalar`].
    fn exp_flushed(self, v: Self::V) -> Self::V;
    /// `v` with `-∞` in the lanes `i` where `first + i >= limit`: the keys after the last
    /// visible one, when lane `i` holds the score of key `first + i`.
    fn hide_from(self, v: Self::V, first: usize, limit: usize) -> Self::V;
}

/// The constants of [`crate::exp::exp`], repeated for the vector versions.
mod exp_consts {
    pub const ROUND: f32 = 12_582_912.0;
    pub const LOG2E: f32 = std::f32::consts::LOG2_E;
    pub const LN2_HI: f32 = 355.0 / 512.0; // 0.693359375
    pub const LN2_LO: f32 = -2.121_944_4e-4;
    pub const X_MIN: f32 = -104.0;
    pub const X_MAX: f32 = 88.8;
    pub const P: [f32; 6] = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        0.5,
    ];
}

/// Below this, [`Simd::exp_flushed`] gives 0. `exp(-87) ≈ 1.6e-38` is still a normal
/// `f32`; from about `-87.34` on, `exp` is subnormal, and an Intel core computes a
/// subnormal result (or rounds one to 0) in a microcode assist that costs over a hundred
/// cycles. Every masked score is `-∞`, so without the flush each tile on the diagonal paid
/// that for half its lanes: at `n = 128` the kernel took about twice as long, at `n = 512`
/// 1.4 times. A weight below `1.6e-38` next to the row's largest weight, `exp(0) = 1`,
/// changes no sum.
pub const FLUSH_BELOW: f32 = -87.0;

/// [`exp_scalar`] with results below `f32::MIN_POSITIVE` flushed to 0: `0` for
/// `x < FLUSH_BELOW` (and `-∞`), `exp_scalar(x)` otherwise (NaN stays NaN).
// ANCHOR: exp_flushed
#[inline(always)]
pub fn exp_flushed_scalar(x: f32) -> f32 {
    if x < FLUSH_BELOW { 0.0 } else { exp_scalar(x) }
}
// ANCHOR_END: exp_flushed

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
    fn exp(self, v: [f32; 4]) -> [f32; 4] {
        v.map(exp_scalar)
    }
    #[inline(always)]
    fn exp_flushed(self, v: [f32; 4]) -> [f32; 4] {
        v.map(exp_flushed_scalar)
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
}

/// [`crate::exp::exp`] written out again, for the kernel's scalar steps and [`Portable`]: the
/// kernel keeps its own copy so that it runs while `exp` is being written as an exercise.
#[inline(always)]
pub fn exp_scalar(x: f32) -> f32 {
    use exp_consts::*;
    let x = if x < X_MIN { X_MIN } else { x };
    let x = if x > X_MAX { X_MAX } else { x };
    let shifted = x * LOG2E + ROUND;
    let n = shifted - ROUND;
    let n_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    let poly = ((((P[0] * r + P[1]) * r + P[2]) * r + P[3]) * r + P[4]) * r + P[5];
    let e_r = poly * (r * r) + r + 1.0;
    let half = n_int >> 1;
    let two_to = |e: i32| f32::from_bits(((e + 127) << 23) as u32);
    e_r * two_to(half) * two_to(n_int - half)
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::exp_consts::*;
    use super::{FLUSH_BELOW, Simd};

    /// AVX-512F: 16 lanes. Only [`Avx512::detect`] makes one, after checking the CPU.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx512(());

    impl Avx512 {
        /// `Some` if this CPU has AVX-512F and FMA.
        pub fn detect() -> Option<Avx512> {
            (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma"))
                .then_some(Avx512(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx512` exists only if `detect` found
    // AVX-512F and FMA, which is all these intrinsics need; loads and stores go through
    // slices whose length was checked to be at least 16.
    impl Simd for Avx512 {
        type V = __m512;
        const LANES: usize = 16;

        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        fn load(self, from: &[f32]) -> __m512 {
            let from = &from[..16];
            unsafe { _mm512_loadu_ps(from.as_ptr()) }
        }
        #[inline(always)]
        fn store(self, v: __m512, to: &mut [f32]) {
            let to = &mut to[..16];
            unsafe { _mm512_storeu_ps(to.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn max(self, a: __m512, b: __m512) -> __m512 {
            // maxps(a, b) = a > b ? a : b, the scalar code's `if a > b { a } else { b }`.
            unsafe { _mm512_max_ps(a, b) }
        }
        #[inline(always)]
        fn reduce_max(self, v: __m512) -> f32 {
            unsafe { _mm512_reduce_max_ps(v) }
        }
        #[inline(always)]
        fn reduce_sum(self, v: __m512) -> f32 {
            unsafe { _mm512_reduce_add_ps(v) }
        }
        #[inline(always)]
        fn exp(self, x: __m512) -> __m512 {
            unsafe {
                // The method of `crate::exp::exp` with the multiply-adds fused, the rounding
                // done by vrndscaleps, and 2ⁿ applied by vscalefps (which also rounds a
                // tiny result to a subnormal or 0, and a huge one to +∞).
                let x = _mm512_max_ps(_mm512_set1_ps(X_MIN), x);
                let x = _mm512_min_ps(_mm512_set1_ps(X_MAX), x);
                let n = _mm512_roundscale_ps::<0>(_mm512_mul_ps(x, _mm512_set1_ps(LOG2E)));
                let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), x);
                let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), r);
                let mut poly = _mm512_set1_ps(P[0]);
                for &p in &P[1..] {
                    poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(p));
                }
                let e_r = _mm512_fmadd_ps(poly, _mm512_mul_ps(r, r), r);
                let e_r = _mm512_add_ps(e_r, _mm512_set1_ps(1.0));
                _mm512_scalef_ps(e_r, n)
            }
        }
        #[inline(always)]
        fn exp_flushed(self, x: __m512) -> __m512 {
            unsafe {
                let limit = _mm512_set1_ps(FLUSH_BELOW);
                // Kept: x >= limit, or NaN ("not less than", unordered). The exp sees no
                // argument below the limit, so it never makes a subnormal; maxps returns
                // its second operand, x, when x is NaN.
                let keep = _mm512_cmp_ps_mask::<_CMP_NLT_UQ>(x, limit);
                _mm512_maskz_mov_ps(keep, self.exp(_mm512_max_ps(limit, x)))
            }
        }
        #[inline(always)]
        fn hide_from(self, v: __m512, first: usize, limit: usize) -> __m512 {
            // Lane i is visible when i < limit - first (all lanes when the limit is far).
            let visible_lanes = limit.saturating_sub(first).min(16) as i32;
            unsafe {
                let lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
                let keep = _mm512_cmplt_epi32_mask(lanes, _mm512_set1_epi32(visible_lanes));
                _mm512_mask_blend_ps(keep, _mm512_set1_ps(f32::NEG_INFINITY), v)
            }
        }
    }

    /// AVX2 with FMA: 8 lanes. Only [`Avx2::detect`] makes one, after checking the CPU.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx2(());

    impl Avx2 {
        /// `Some` if this CPU has AVX2 and FMA.
        pub fn detect() -> Option<Avx2> {
            (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
                .then_some(Avx2(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx2` exists only if `detect` found
    // AVX2 and FMA, which is all these intrinsics need; loads and stores go through slices
    // whose length was checked to be at least 8.
    impl Simd for Avx2 {
        type V = __m256;
        const LANES: usize = 8;

        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        fn load(self, from: &[f32]) -> __m256 {
            let from = &from[..8];
            unsafe { _mm256_loadu_ps(from.as_ptr()) }
        }
        #[inline(always)]
        fn store(self, v: __m256, to: &mut [f32]) {
            let to = &mut to[..8];
            unsafe { _mm256_storeu_ps(to.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn max(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_max_ps(a, b) }
        }
        #[inline(always)]
        fn reduce_max(self, v: __m256) -> f32 {
            unsafe {
                let m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
                let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
                let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
                _mm_cvtss_f32(m)
            }
        }
        #[inline(always)]
        fn reduce_sum(self, v: __m256) -> f32 {
            unsafe {
                let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
                _mm_cvtss_f32(s)
            }
        }
        #[inline(always)]
        fn exp(self, x: __m256) -> __m256 {
            unsafe {
                let x = _mm256_max_ps(_mm256_set1_ps(X_MIN), x);
                let x = _mm256_min_ps(_mm256_set1_ps(X_MAX), x);
                let round = _mm256_set1_ps(ROUND);
                let shifted = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2E)), round);
                let n = _mm256_sub_ps(shifted, round);
                let n_int =
                    _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_castps_si256(round));
                let r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(LN2_HI)));
                let r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(LN2_LO)));
                let mut poly = _mm256_set1_ps(P[0]);
                for &p in &P[1..] {
                    poly = _mm256_add_ps(_mm256_mul_ps(poly, r), _mm256_set1_ps(p));
                }
                let e_r = _mm256_add_ps(_mm256_mul_ps(poly, _mm256_mul_ps(r, r)), r);
                let e_r = _mm256_add_ps(e_r, _mm256_set1_ps(1.0));
                let half = _mm256_srai_epi32::<1>(n_int);
                let bias = _mm256_set1_epi32(127);
                let two_to_half = _mm256_slli_epi32::<23>(_mm256_add_epi32(half, bias));
                let rest = _mm256_sub_epi32(n_int, half);
                let two_to_rest = _mm256_slli_epi32::<23>(_mm256_add_epi32(rest, bias));
                let scaled = _mm256_mul_ps(e_r, _mm256_castsi256_ps(two_to_half));
                _mm256_mul_ps(scaled, _mm256_castsi256_ps(two_to_rest))
            }
        }
        #[inline(always)]
        fn exp_flushed(self, x: __m256) -> __m256 {
            unsafe {
                let limit = _mm256_set1_ps(FLUSH_BELOW);
                let keep = _mm256_cmp_ps::<_CMP_NLT_UQ>(x, limit);
                _mm256_and_ps(keep, self.exp(_mm256_max_ps(limit, x)))
            }
        }
        #[inline(always)]
        fn hide_from(self, v: __m256, first: usize, limit: usize) -> __m256 {
            let visible_lanes = limit.saturating_sub(first).min(8) as i32;
            unsafe {
                let lanes = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
                let keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(visible_lanes), lanes);
                _mm256_blendv_ps(
                    _mm256_set1_ps(f32::NEG_INFINITY),
                    v,
                    _mm256_castsi256_ps(keep),
                )
            }
        }
    }
}
