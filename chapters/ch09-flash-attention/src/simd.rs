//! The thirteen vector operations the kernel needs, for three kinds of vector unit.
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
//! The weights are powers of two, [`Simd::exp2_flushed`]: the kernel scales its queries by
//! `log₂ e` once, so that `e^(s - m) = 2^(s' - m')` for the scaled scores `s'` (see
//! [`exp2_flushed_scalar`]). It is [`crate::exp::exp`]'s method without the first step:
//! without fused multiply-adds for [`Portable`] and [`Avx2`], which give the scalar results
//! bit for bit (a test checks it); with them, and with AVX-512's `vscalefps` for the `2ⁿ`,
//! for [`Avx512`] (a test checks it is within 2 ulp too).

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
    /// Whether some lane is greater than `x`.
    fn any_greater(self, v: Self::V, x: f32) -> bool;
    /// `2ˣ` of every lane, exactly 0 below [`FLUSH_BELOW`]: the softmax weights. Bit for
    /// bit [`exp2_flushed_scalar`] ([`Portable`], [`Avx2`]), or within the same 2 ulp with
    /// fused multiply-adds ([`Avx512`]).
    fn exp2_flushed(self, v: Self::V) -> Self::V;
    /// `v` with `-∞` in the lanes `i` where `first + i >= limit`: the keys after the last
    /// visible one, when lane `i` holds the score of key `first + i`.
    fn hide_from(self, v: Self::V, first: usize, limit: usize) -> Self::V;
}

/// The constants of [`exp2_flushed_scalar`], shared with the vector versions.
mod exp2_consts {
    /// `1.5 · 2²³`: adding it rounds a float `|x| < 2²²` to the nearest integer.
    pub const ROUND: f32 = 12_582_912.0;
    /// From here on `2ˣ` overflows to `+∞`; larger arguments are clamped to it.
    pub const X_MAX: f32 = 128.0;
    /// Cephes' polynomial for `2ᶠ` on `|f| ≤ 1/2`: `2ᶠ ≈ 1 + f·P(f)`, highest power first.
    pub const P: [f32; 6] = [
        1.535_336_2e-4,
        1.339_887_4e-3,
        9.618_438e-3,
        5.550_332_5e-2,
        2.402_264_8e-1,
        6.931_472e-1,
    ];
}

/// Below this, [`Simd::exp2_flushed`] gives 0. `2⁻¹²⁶` is the smallest normal `f32`; below
/// it `2ˣ` is a subnormal number or 0, and an Intel core computes a subnormal result (or
/// rounds one to 0) in a microcode assist that costs over a hundred cycles. Every masked
/// score is `-∞`, so without the flush each tile on the diagonal paid that for half its
/// lanes: at `n = 128` the kernel took about twice as long, at `n = 512` 1.4 times. A
/// weight below `2⁻¹²⁶ ≈ 1.2e-38` next to the row's largest weight, `2⁰ = 1`, changes no
/// sum.
pub const FLUSH_BELOW: f32 = -126.0;

/// `2ˣ` (within 2 ulp), but exactly 0 below [`FLUSH_BELOW`] (and for `-∞`), so that the
/// result is never a subnormal number; `+∞` from 128 on, NaN for NaN.
///
/// In base 2 [`crate::exp::exp`]'s method gets shorter: `x = n + f` with `n` the nearest
/// integer is exact, no `ln 2` in two parts is needed, and `2ˣ = 2ⁿ · 2ᶠ` with `2ⁿ` put
/// together from its exponent bits and `2ᶠ` a polynomial on `|f| ≤ 1/2`. `2ⁿ` is applied
/// in two halves so that `n = 128` still overflows to `+∞` rather than wrapping around.
///
/// # Shapes
/// One `f32` in, one out (the vector versions do the same lane by lane).
// ANCHOR: exp2_flushed
#[inline(always)]
pub fn exp2_flushed_scalar(x: f32) -> f32 {
    use exp2_consts::*;
    if x < FLUSH_BELOW {
        return 0.0;
    }
    let x = if x > X_MAX { X_MAX } else { x };
    let shifted = x + ROUND;
    let n = shifted - ROUND; // x rounded to the nearest integer
    let n_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let f = x - n; // exact, |f| ≤ 1/2
    let mut poly = P[0];
    for p in &P[1..] {
        poly = poly * f + p;
    }
    let two_f = poly * f + 1.0;
    let half = n_int >> 1;
    let two_to = |e: i32| f32::from_bits(((e + 127) << 23) as u32);
    two_f * two_to(half) * two_to(n_int - half)
}
// ANCHOR_END: exp2_flushed

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
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::exp2_consts::*;
    use super::{FLUSH_BELOW, Simd};

    /// AVX-512F: 16 lanes. Only [`Avx512::detect`] makes one, after checking the CPU.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx512(());

    impl Avx512 {
        /// `Some` if this CPU has AVX-512F and FMA.
        pub fn detect() -> Option<Avx512> {
            shared::exact::Isa::Avx512
                .is_available()
                .then_some(Avx512(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx512` exists only if `detect` found
    // AVX-512F and FMA, which is all these intrinsics need; loads and stores go through
    // slices whose length was checked to be at least 16.
    #[expect(
        clippy::undocumented_unsafe_blocks,
        reason = "the SAFETY comment above the impl covers every block in it"
    )]
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
        fn any_greater(self, v: __m512, x: f32) -> bool {
            unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, _mm512_set1_ps(x)) != 0 }
        }
        #[inline(always)]
        fn exp2_flushed(self, x: __m512) -> __m512 {
            unsafe {
                // Kept: x >= FLUSH_BELOW, or NaN ("not less than", unordered). The rest
                // of the computation sees no argument below it, so it never makes a
                // subnormal; maxps and minps return their second operand, x, when x is
                // NaN.
                let limit = _mm512_set1_ps(FLUSH_BELOW);
                let keep = _mm512_cmp_ps_mask::<_CMP_NLT_UQ>(x, limit);
                let x = _mm512_max_ps(limit, x);
                let x = _mm512_min_ps(_mm512_set1_ps(X_MAX), x);
                // The rounding by vrndscaleps, the multiply-adds fused, and 2ⁿ applied by
                // vscalefps, which overflows to +∞ by itself and writes 0 in the lanes
                // not kept.
                let n = _mm512_roundscale_ps::<0>(x);
                let f = _mm512_sub_ps(x, n);
                let mut poly = _mm512_set1_ps(P[0]);
                for &p in &P[1..] {
                    poly = _mm512_fmadd_ps(poly, f, _mm512_set1_ps(p));
                }
                let two_f = _mm512_fmadd_ps(poly, f, _mm512_set1_ps(1.0));
                _mm512_maskz_scalef_ps(keep, two_f, n)
            }
        }
        #[inline(always)]
        fn hide_from(self, v: __m512, first: usize, limit: usize) -> __m512 {
            // Lane i is visible when i < limit - first (all lanes when the limit is far).
            let visible_lanes = limit.saturating_sub(first).min(16) as i32;
            unsafe {
                let lanes = _mm512_set_epi32(
                    15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
                );
                let keep =
                    _mm512_cmplt_epi32_mask(lanes, _mm512_set1_epi32(visible_lanes));
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
            shared::exact::Isa::Avx2.is_available().then_some(Avx2(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx2` exists only if `detect` found
    // AVX2 and FMA, which is all these intrinsics need; loads and stores go through slices
    // whose length was checked to be at least 8.
    #[expect(
        clippy::undocumented_unsafe_blocks,
        reason = "the SAFETY comment above the impl covers every block in it"
    )]
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
                let m = _mm_max_ps(
                    _mm256_castps256_ps128(v),
                    _mm256_extractf128_ps::<1>(v),
                );
                let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
                let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
                _mm_cvtss_f32(m)
            }
        }
        #[inline(always)]
        fn reduce_sum(self, v: __m256) -> f32 {
            unsafe {
                let s = _mm_add_ps(
                    _mm256_castps256_ps128(v),
                    _mm256_extractf128_ps::<1>(v),
                );
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
                _mm_cvtss_f32(s)
            }
        }
        #[inline(always)]
        fn any_greater(self, v: __m256, x: f32) -> bool {
            unsafe {
                _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_set1_ps(x)))
                    != 0
            }
        }
        #[inline(always)]
        fn exp2_flushed(self, x: __m256) -> __m256 {
            unsafe {
                // `exp2_flushed_scalar` lane by lane, unfused, so bit for bit the same.
                let limit = _mm256_set1_ps(FLUSH_BELOW);
                let keep = _mm256_cmp_ps::<_CMP_NLT_UQ>(x, limit);
                let x = _mm256_max_ps(limit, x);
                let x = _mm256_min_ps(_mm256_set1_ps(X_MAX), x);
                let round = _mm256_set1_ps(ROUND);
                let shifted = _mm256_add_ps(x, round);
                let n = _mm256_sub_ps(shifted, round);
                let n_int = _mm256_sub_epi32(
                    _mm256_castps_si256(shifted),
                    _mm256_castps_si256(round),
                );
                let f = _mm256_sub_ps(x, n);
                let mut poly = _mm256_set1_ps(P[0]);
                for &p in &P[1..] {
                    poly = _mm256_add_ps(_mm256_mul_ps(poly, f), _mm256_set1_ps(p));
                }
                let two_f =
                    _mm256_add_ps(_mm256_mul_ps(poly, f), _mm256_set1_ps(1.0));
                let half = _mm256_srai_epi32::<1>(n_int);
                let bias = _mm256_set1_epi32(127);
                let two_to_half =
                    _mm256_slli_epi32::<23>(_mm256_add_epi32(half, bias));
                let rest = _mm256_sub_epi32(n_int, half);
                let two_to_rest =
                    _mm256_slli_epi32::<23>(_mm256_add_epi32(rest, bias));
                let scaled = _mm256_mul_ps(two_f, _mm256_castsi256_ps(two_to_half));
                let scaled = _mm256_mul_ps(scaled, _mm256_castsi256_ps(two_to_rest));
                _mm256_and_ps(keep, scaled)
            }
        }
        #[inline(always)]
        fn hide_from(self, v: __m256, first: usize, limit: usize) -> __m256 {
            let visible_lanes = limit.saturating_sub(first).min(8) as i32;
            unsafe {
                let lanes = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
                let keep =
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(visible_lanes), lanes);
                _mm256_blendv_ps(
                    _mm256_set1_ps(f32::NEG_INFINITY),
                    v,
                    _mm256_castsi256_ps(keep),
                )
            }
        }
    }
}
