//! Version 2 of chapter 20's one-row product over quantised blocks: the listing's bits, its
//! weights computed sixteen at a time.
//!
//! The listing computes the weights of 64 rows from their blocks, then multiplies them by
//! the row in the float32 path's order (`shared::exact::row_dots_part`). Its profile on a
//! decoding step: three quarters of the time computing the weights, a block of 32 at a time
//! through a function that returns them (four lanes at a time, then a copy), a tenth
//! multiplying. Here a block's weights are computed in two 16-lane registers and written
//! where the product reads them:
//!
//! - Q4_1: the 16 bytes widened to 16 integers, the low four bits of each (weights 0 to 15)
//!   and the high four (weights 16 to 31) turned into floats, multiplied by `d`, then `m`
//!   added, as the listing's `d * q + m` (`d·q` needs at most 11 + 4 significant bits, so
//!   it is exact and only the addition rounds);
//! - Q8_0: the 32 signed bytes widened and turned into floats, multiplied by `d`.
//!
//! A byte turned into a float is exact, and so is a float16 `d` or `m` turned into float32,
//! so every weight is the listing's, and the product that follows is the listing's call: the
//! same bits (the tests check it). Without AVX-512 (or for float16 and float32 matrices)
//! each row is the listing's `row_into`.

use ch20_real_model::gguf::GgmlType;
use ch20_real_model::quantised::QuantMatrix;
use rayon::prelude::*;

/// Rows per task of the thread pool: the listing's pass.
const ROWS_PER_TASK: usize = 64;

/// Rows whose weights are computed together, then multiplied: one of the product's blocks
/// of four outputs, whose weights (24 KB for 1536 columns) stay in the first-level cache
/// between being written and being read.
const ROWS_PER_PASS: usize = 4;

/// [`QuantMatrix::times_row`], bit for bit: `x·Wᵀ` for one row `x`.
///
/// # Shapes
/// `x`: `[cols]`. Returns `[rows]`.
pub fn times_row(m: &QuantMatrix, x: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; m.rows];
    out.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each_init(
        Vec::new,
        |weights, (task, out)| {
            for (pass, out) in out.chunks_mut(ROWS_PER_PASS).enumerate() {
                let first = task * ROWS_PER_TASK + pass * ROWS_PER_PASS;
                weights.resize(out.len() * m.cols, 0.0);
                for (i, row) in weights.chunks_exact_mut(m.cols.max(1)).enumerate() {
                    row_into(m, first + i, row);
                }
                shared::exact::row_dots_part(weights, x, first, out, m.rows);
            }
        },
    );
    out
}

/// Row `i`'s weights, as [`QuantMatrix::row_into`] computes them.
///
/// # Shapes
/// `out`: `[cols]` (overwritten).
pub fn row_into(m: &QuantMatrix, i: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        match m.ggml_type {
            // SAFETY: the processor has AVX-512F and F16C.
            GgmlType::Q4_1 => return unsafe { x86::q4_1_row(m.row(i), out) },
            // SAFETY: as above.
            GgmlType::Q8_0 => return unsafe { x86::q8_0_row(m.row(i), out) },
            GgmlType::F16 | GgmlType::F32 => {}
        }
    }
    m.row_into(i, out);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// A float16 stored little-endian at `bytes[0..2]`, as float32 (exact).
    #[target_feature(enable = "f16c")]
    fn half(bytes: &[u8]) -> f32 {
        let bits = i32::from(u16::from_le_bytes([bytes[0], bytes[1]]));
        _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)))
    }

    /// A row of Q4_1 blocks (20 bytes: `d`, `m`, 16 bytes of two four-bit numbers each)
    /// as weights `d·q + m`.
    ///
    /// # Shapes
    /// `row`: `n` blocks of 20 bytes; `out`: `[32 n]`.
    #[target_feature(enable = "avx512f,f16c")]
    pub(super) fn q4_1_row(row: &[u8], out: &mut [f32]) {
        let low_bits = _mm512_set1_epi32(0x0F);
        for (block, out) in row.chunks_exact(20).zip(out.chunks_exact_mut(32)) {
            let d = _mm512_set1_ps(half(&block[0..2]));
            let m = _mm512_set1_ps(half(&block[2..4]));
            let bytes: &[u8; 16] = block[4..20].try_into().expect("16 bytes");
            // SAFETY: `bytes` is 16 readable bytes; an unaligned load.
            let bytes = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
            let wide = _mm512_cvtepu8_epi32(bytes);
            let low = _mm512_cvtepi32_ps(_mm512_and_si512(wide, low_bits));
            let high = _mm512_cvtepi32_ps(_mm512_srli_epi32::<4>(wide));
            let (first, second) = out.split_at_mut(16);
            store(first, _mm512_add_ps(_mm512_mul_ps(d, low), m));
            store(second, _mm512_add_ps(_mm512_mul_ps(d, high), m));
        }
    }

    /// A row of Q8_0 blocks (34 bytes: `d`, 32 signed bytes) as weights `q·d`.
    ///
    /// # Shapes
    /// `row`: `n` blocks of 34 bytes; `out`: `[32 n]`.
    #[target_feature(enable = "avx512f,f16c")]
    pub(super) fn q8_0_row(row: &[u8], out: &mut [f32]) {
        for (block, out) in row.chunks_exact(34).zip(out.chunks_exact_mut(32)) {
            let d = _mm512_set1_ps(half(&block[0..2]));
            let (first, second) = out.split_at_mut(16);
            for (half_block, out) in
                [(&block[2..18], first), (&block[18..34], second)]
            {
                let bytes: &[u8; 16] = half_block.try_into().expect("16 bytes");
                // SAFETY: `bytes` is 16 readable bytes; an unaligned load.
                let bytes = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
                let q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
                store(out, _mm512_mul_ps(q, d));
            }
        }
    }

    /// Writes 16 lanes to `out`.
    #[target_feature(enable = "avx512f")]
    fn store(out: &mut [f32], v: __m512) {
        let out: &mut [f32; 16] = out.try_into().expect("16 numbers");
        // SAFETY: `out` is 16 writable numbers; an unaligned store.
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), v) }
    }
}
