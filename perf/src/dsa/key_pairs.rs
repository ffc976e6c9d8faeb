//! The three vector operations the fast DSA kernel's scores need beyond chapter 9's
//! [`Simd`]: two keys' scores of half as many heads in one vector.
//!
//! With one lane per head, eight heads fill half of AVX-512's sixteen lanes, and every
//! multiply-add wastes the other half. Two lanes per head fill them: lane `2h` adds head
//! `h`'s products of the even features, lane `2h + 1` those of the odd ones, so that one
//! multiply-add takes two features of a key, `[k_2p, k_2p+1]` repeated over the lanes
//! ([`KeyPairs::splat_pair`]), against `[q_0,2p, q_0,2p+1, q_1,2p, …]`. Each head's score
//! is then the sum of its two lanes, and [`KeyPairs::add_pairs`] makes those sums for two
//! keys into one vector: in every group of four lanes, two heads of the first key and the
//! same two heads of the second. [`KeyPairs::swap_keys`] swaps the two keys' halves of each
//! group, so that a head's softmax can combine what both halves hold.

#[cfg(target_arch = "x86_64")]
use shared::simd::{Avx2, Avx512};
use shared::simd::{Portable, Simd};

/// Two keys' scores in one vector: see the module's description. `LANES` is a multiple of
/// four for every implementation.
pub trait KeyPairs: Simd {
    /// `[x[0], x[1], x[0], x[1], …]`.
    ///
    /// # Shapes
    /// `x`: at least 2 floats. Returns one vector.
    fn splat_pair(self, x: &[f32]) -> Self::V;

    /// In each group of four lanes: `[a_0 + a_1, a_2 + a_3, b_0 + b_1, b_2 + b_3]`.
    ///
    /// # Shapes
    /// Two vectors in, one out.
    fn add_pairs(self, a: Self::V, b: Self::V) -> Self::V;

    /// In each group of four lanes: `[v_2, v_3, v_0, v_1]`.
    ///
    /// # Shapes
    /// One vector in, one out.
    fn swap_keys(self, v: Self::V) -> Self::V;
}

impl KeyPairs for Portable {
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

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Avx2, Avx512, KeyPairs};

    /// `shuffle_ps`'s selector of lanes 0 and 2 of each operand, and of lanes 1 and 3.
    const EVEN: i32 = 0b10_00_10_00;
    const ODD: i32 = 0b11_01_11_01;
    /// `permute_ps`'s selector of lanes 2, 3, 0, 1.
    const SWAP: i32 = 0b01_00_11_10;

    /// The two floats at the start of `x` as one 64-bit integer, to be repeated.
    #[inline(always)]
    fn pair_bits(x: &[f32]) -> i64 {
        let x = &x[..2];
        // SAFETY: `x` holds two floats, eight bytes; the read needs no alignment.
        unsafe { x.as_ptr().cast::<i64>().read_unaligned() }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx512` exists only if its `detect`
    // found AVX-512F, which is all these intrinsics need.
    #[expect(
        clippy::undocumented_unsafe_blocks,
        reason = "the SAFETY comment above the impl covers every block in it"
    )]
    impl KeyPairs for Avx512 {
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

    // SAFETY (every `unsafe` block in this impl): an `Avx2` exists only if its `detect`
    // found AVX2 and FMA, which is all these intrinsics need.
    #[expect(
        clippy::undocumented_unsafe_blocks,
        reason = "the SAFETY comment above the impl covers every block in it"
    )]
    impl KeyPairs for Avx2 {
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
}
