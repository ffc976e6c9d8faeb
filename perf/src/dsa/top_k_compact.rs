//! The passes of [`RadixTopK`](super::top_k_radix::RadixTopK) over every visible score:
//! keep, in order, the entries whose order key is at least a bound.
//!
//! Which scores pass is as good as random, so a branch on it would be mispredicted time
//! and again. Written without a branch, every entry is written at the next free slot and
//! the count moves on only for those kept, about three instructions an entry. AVX-512
//! does sixteen at once: a comparison gives a mask of the lanes kept, `vpcompressd` packs
//! those lanes to the front of a vector, the whole vector is written at the next free
//! slot, and the count moves on by the mask's number of ones. Both write past the last
//! kept entry, so the outputs have 16 slots to spare.

use shared::simd::Isa;

/// An unsigned integer that orders as `f32::total_cmp` orders the floats: larger is better.
///
/// # Shapes
/// One float in, one integer out.
#[inline(always)]
pub fn order_key(score: f32) -> u32 {
    let bits = score.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// Writes into `keys` and `indices`, from their start, the order keys (see [`order_key`])
/// of the scores whose key is at least `bound`, and their indices, in order; returns how
/// many. A `bound` of 0 keeps every score.
///
/// # Shapes
/// `scores`: `n`; `keys`, `indices`: at least `n + 16`.
pub fn keys_at_least(
    isa: Isa,
    scores: &[f32],
    bound: u32,
    keys: &mut [u32],
    indices: &mut [u32],
) -> usize {
    assert!(
        keys.len() >= scores.len() + 16 && indices.len() >= scores.len() + 16,
        "keys_at_least: outputs of {} and {} slots for {} scores",
        keys.len(),
        indices.len(),
        scores.len()
    );
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_available() {
        // SAFETY: AVX-512F was just found on this processor; the outputs' lengths were
        // checked above.
        return unsafe { x86::keys_at_least(scores, bound, keys, indices) };
    }
    let _ = isa;
    let mut count = 0;
    for (index, &score) in scores.iter().enumerate() {
        let key = order_key(score);
        keys[count] = key;
        indices[count] = index as u32;
        count += usize::from(key >= bound);
    }
    count
}

/// Writes into `out`, from its start, the entries of `payload` whose key in `keys` is at
/// least `bound`, in order; returns how many.
///
/// # Shapes
/// `keys`, `payload`: `n` each; `out`: at least `n + 16`.
pub fn payload_at_least(
    isa: Isa,
    keys: &[u32],
    payload: &[u32],
    bound: u32,
    out: &mut [u32],
) -> usize {
    assert!(
        payload.len() == keys.len() && out.len() >= keys.len() + 16,
        "payload_at_least: {} keys, {} entries, {} slots",
        keys.len(),
        payload.len(),
        out.len()
    );
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_available() {
        // SAFETY: AVX-512F was just found on this processor; the lengths were checked
        // above.
        return unsafe { x86::payload_at_least(keys, payload, bound, out) };
    }
    let _ = isa;
    let mut count = 0;
    for (&key, &entry) in keys.iter().zip(payload) {
        out[count] = entry;
        count += usize::from(key >= bound);
    }
    count
}

/// Writes into `out`, from its start, the keys of `keys` from `low` to `high` (both
/// included), in order; returns how many.
///
/// # Shapes
/// `keys`: `n`; `out`: at least `n + 16`.
pub fn keys_between(
    isa: Isa,
    keys: &[u32],
    low: u32,
    high: u32,
    out: &mut [u32],
) -> usize {
    assert!(
        out.len() >= keys.len() + 16,
        "keys_between: {} slots for {} keys",
        out.len(),
        keys.len()
    );
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && isa.is_available() {
        // SAFETY: AVX-512F was just found on this processor; the length was checked above.
        return unsafe { x86::keys_between(keys, low, high, out) };
    }
    let _ = isa;
    let mut count = 0;
    for &key in keys {
        out[count] = key;
        count += usize::from((low..=high).contains(&key));
    }
    count
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::order_key;

    /// [`super::keys_at_least`], sixteen scores at a time.
    ///
    /// # Safety
    /// The processor has AVX-512F; `keys` and `indices` hold `scores.len() + 16` slots.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn keys_at_least(
        scores: &[f32],
        bound: u32,
        keys: &mut [u32],
        indices: &mut [u32],
    ) -> usize {
        let bound_v = _mm512_set1_epi32(bound as i32);
        let sign = _mm512_set1_epi32(i32::MIN);
        let mut index =
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let sixteen = _mm512_set1_epi32(16);
        let mut count = 0;
        let mut chunks = scores.chunks_exact(16);
        for chunk in &mut chunks {
            // SAFETY: `chunk` holds 16 floats; the stores write 16 slots from `count`,
            // at most the number of scores before this chunk, within the `n + 16` given.
            unsafe {
                let bits = _mm512_loadu_si512(chunk.as_ptr().cast());
                // `order_key` in lanes: every bit flipped for a negative float (the
                // arithmetic shift makes its mask all ones), the sign bit for a positive.
                let flip = _mm512_or_si512(_mm512_srai_epi32::<31>(bits), sign);
                let key = _mm512_xor_si512(bits, flip);
                let kept = _mm512_cmpge_epu32_mask(key, bound_v);
                let to_keys = keys[count..][..16].as_mut_ptr();
                _mm512_storeu_si512(
                    to_keys.cast(),
                    _mm512_maskz_compress_epi32(kept, key),
                );
                let to_indices = indices[count..][..16].as_mut_ptr();
                _mm512_storeu_si512(
                    to_indices.cast(),
                    _mm512_maskz_compress_epi32(kept, index),
                );
                count += kept.count_ones() as usize;
            }
            index = _mm512_add_epi32(index, sixteen);
        }
        let done = scores.len() - chunks.remainder().len();
        for (at, &score) in chunks.remainder().iter().enumerate() {
            let key = order_key(score);
            keys[count] = key;
            indices[count] = (done + at) as u32;
            count += usize::from(key >= bound);
        }
        count
    }

    /// [`super::payload_at_least`], sixteen entries at a time.
    ///
    /// # Safety
    /// The processor has AVX-512F; `payload` is as long as `keys`, `out` holds
    /// `keys.len() + 16` slots.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn payload_at_least(
        keys: &[u32],
        payload: &[u32],
        bound: u32,
        out: &mut [u32],
    ) -> usize {
        let bound_v = _mm512_set1_epi32(bound as i32);
        let mut count = 0;
        let (mut key_chunks, mut entry_chunks) =
            (keys.chunks_exact(16), payload.chunks_exact(16));
        for (key, entry) in (&mut key_chunks).zip(&mut entry_chunks) {
            // SAFETY: both chunks hold 16 numbers; the store writes 16 slots from `count`,
            // within the `n + 16` given.
            unsafe {
                let key = _mm512_loadu_si512(key.as_ptr().cast());
                let entry = _mm512_loadu_si512(entry.as_ptr().cast());
                let kept = _mm512_cmpge_epu32_mask(key, bound_v);
                let to = out[count..][..16].as_mut_ptr();
                _mm512_storeu_si512(
                    to.cast(),
                    _mm512_maskz_compress_epi32(kept, entry),
                );
                count += kept.count_ones() as usize;
            }
        }
        for (&key, &entry) in
            key_chunks.remainder().iter().zip(entry_chunks.remainder())
        {
            out[count] = entry;
            count += usize::from(key >= bound);
        }
        count
    }

    /// [`super::keys_between`], sixteen keys at a time.
    ///
    /// # Safety
    /// The processor has AVX-512F; `out` holds `keys.len() + 16` slots.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn keys_between(
        keys: &[u32],
        low: u32,
        high: u32,
        out: &mut [u32],
    ) -> usize {
        let (low_v, high_v) = (
            _mm512_set1_epi32(low as i32),
            _mm512_set1_epi32(high as i32),
        );
        let mut count = 0;
        let mut chunks = keys.chunks_exact(16);
        for chunk in &mut chunks {
            // SAFETY: the chunk holds 16 keys; the store writes 16 slots from `count`,
            // within the `n + 16` given.
            unsafe {
                let key = _mm512_loadu_si512(chunk.as_ptr().cast());
                let kept = _mm512_cmpge_epu32_mask(key, low_v)
                    & _mm512_cmple_epu32_mask(key, high_v);
                let to = out[count..][..16].as_mut_ptr();
                _mm512_storeu_si512(
                    to.cast(),
                    _mm512_maskz_compress_epi32(kept, key),
                );
                count += kept.count_ones() as usize;
            }
        }
        for &key in chunks.remainder() {
            out[count] = key;
            count += usize::from((low..=high).contains(&key));
        }
        count
    }
}
