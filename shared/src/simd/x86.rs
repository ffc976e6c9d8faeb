//! The x86-64 tokens: AVX-512 (16 lanes) and AVX2 with FMA (8 lanes).

use std::arch::x86_64::*;

use super::exp2::{FLUSH_BELOW, P, ROUND, X_MAX};
use super::{Isa, Simd, SimdOp};

/// AVX-512F: 16 lanes. Only [`Avx512::detect`] makes one, after checking the CPU.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Avx512 {
    /// `Some` if this CPU has AVX-512F and FMA.
    pub fn detect() -> Option<Avx512> {
        Isa::Avx512.is_available().then_some(Avx512(()))
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
    const ISA: Isa = Isa::Avx512;

    #[inline(always)]
    fn splat(self, x: f32) -> __m512 {
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    fn load(self, from: &[f32]) -> __m512 {
        let from: [f32; 16] = from[..16].try_into().expect("16 numbers");
        // SAFETY: `[f32; 16]` and `__m512` are 64 bytes, every bit pattern valid in both.
        unsafe { std::mem::transmute::<[f32; 16], __m512>(from) }
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
    #[inline(always)]
    fn splat_pair(self, x: &[f32]) -> __m512 {
        unsafe { _mm512_castsi512_ps(_mm512_set1_epi64(pair_bits(x))) }
    }
    #[inline(always)]
    fn add_pairs(self, a: __m512, b: __m512) -> __m512 {
        unsafe {
            let even = _mm512_shuffle_ps::<EVEN>(a, b);
            let odd = _mm512_shuffle_ps::<ODD>(a, b);
            _mm512_add_ps(even, odd)
        }
    }
    #[inline(always)]
    fn swap_keys(self, v: __m512) -> __m512 {
        unsafe { _mm512_permute_ps::<SWAP>(v) }
    }
}

/// AVX2 with FMA: 8 lanes. Only [`Avx2::detect`] makes one, after checking the CPU.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

impl Avx2 {
    /// `Some` if this CPU has AVX2 and FMA.
    pub fn detect() -> Option<Avx2> {
        Isa::Avx2.is_available().then_some(Avx2(()))
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
    const ISA: Isa = Isa::Avx2;

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
            let m =
                _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let m = _mm_max_ss(m, _mm_shuffle_ps::<1>(m, m));
            _mm_cvtss_f32(m)
        }
    }
    #[inline(always)]
    fn reduce_sum(self, v: __m256) -> f32 {
        unsafe {
            let s =
                _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
            _mm_cvtss_f32(s)
        }
    }
    #[inline(always)]
    fn any_greater(self, v: __m256, x: f32) -> bool {
        unsafe {
            _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_set1_ps(x))) != 0
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
            let two_f = _mm256_add_ps(_mm256_mul_ps(poly, f), _mm256_set1_ps(1.0));
            let half = _mm256_srai_epi32::<1>(n_int);
            let bias = _mm256_set1_epi32(127);
            let two_to_half = _mm256_slli_epi32::<23>(_mm256_add_epi32(half, bias));
            let rest = _mm256_sub_epi32(n_int, half);
            let two_to_rest = _mm256_slli_epi32::<23>(_mm256_add_epi32(rest, bias));
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
            let keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(visible_lanes), lanes);
            _mm256_blendv_ps(
                _mm256_set1_ps(f32::NEG_INFINITY),
                v,
                _mm256_castsi256_ps(keep),
            )
        }
    }
    #[inline(always)]
    fn splat_pair(self, x: &[f32]) -> __m256 {
        unsafe { _mm256_castsi256_ps(_mm256_set1_epi64x(pair_bits(x))) }
    }
    #[inline(always)]
    fn add_pairs(self, a: __m256, b: __m256) -> __m256 {
        unsafe {
            let even = _mm256_shuffle_ps::<EVEN>(a, b);
            let odd = _mm256_shuffle_ps::<ODD>(a, b);
            _mm256_add_ps(even, odd)
        }
    }
    #[inline(always)]
    fn swap_keys(self, v: __m256) -> __m256 {
        unsafe { _mm256_permute_ps::<SWAP>(v) }
    }
}

/// `shuffle_ps`'s selector of lanes 0 and 2 of each operand, and of lanes 1 and 3
/// ([`Simd::add_pairs`]).
const EVEN: i32 = 0b10_00_10_00;
const ODD: i32 = 0b11_01_11_01;
/// `permute_ps`'s selector of lanes 2, 3, 0, 1 ([`Simd::swap_keys`]).
const SWAP: i32 = 0b01_00_11_10;

/// The two floats at the start of `x` as one 64-bit integer, to be repeated
/// ([`Simd::splat_pair`]).
#[inline(always)]
fn pair_bits(x: &[f32]) -> i64 {
    let x = &x[..2];
    // SAFETY: `x` holds two floats, eight bytes; the read needs no alignment.
    unsafe { x.as_ptr().cast::<i64>().read_unaligned() }
}

/// `op` compiled for AVX-512F and FMA: `op.run` and every `#[inline(always)]` function it
/// calls (the token's methods among them) are inlined here, so the intrinsics become single
/// instructions. Called by [`super::with_isa`] only, with a token that proves the CPU
/// has the features.
#[target_feature(enable = "avx512f,fma")]
pub(super) fn run_avx512<Op: SimdOp>(simd: Avx512, op: Op) -> Op::Output {
    op.run(simd)
}

/// `op` compiled for AVX2 and FMA, as [`run_avx512`].
#[target_feature(enable = "avx2,fma")]
pub(super) fn run_avx2<Op: SimdOp>(simd: Avx2, op: Op) -> Op::Output {
    op.run(simd)
}
