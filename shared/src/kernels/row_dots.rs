//! MKL's `sgemv` order for the dot products of contiguous rows with one vector (`W·x`, and
//! the one-row product `x·Wᵀ` of every layer in a decoding step), four outputs per pass over
//! the vector, on every thread of the current rayon pool.
//!
//! [`row_dot_sum`] computes one output at a time, so it reads the whole vector again for
//! every output. Here the four outputs of one of MKL's blocks advance side by side: each
//! round of 16 entries of the vector is loaded once and fused into the 16 lanes of each of
//! the four outputs, so the vector stays in registers and each matrix row is streamed from
//! memory once. The additions of an output happen in its own lanes, in the order of
//! [`row_dot_sum`], so every output has the same bits. The outputs are split between the
//! threads; an output's order depends only on its index among all the outputs, never on
//! which thread computes it, so the bits are the same on any number of threads too.
//!
//! [`row_dot_sum`] stays the reference: the tests below hold this kernel to it.

use std::borrow::Cow;

use ndarray::{ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use super::dot_orders::{finish_row_dot, first_lanes, full_rounds, row_dot_sum};

/// Outputs per pass over the vector: one of MKL's blocks. Four outputs of two 8-lane
/// accumulators each, and the vector's two registers, fit the 16 vector registers of AVX2.
const BLOCK: usize = 4;

/// Outputs per thread below which a product is not worth splitting: 64 rows of 576 entries
/// are about 10 µs of work on one core, several times what handing work to a thread costs.
const MIN_OUTPUTS_PER_THREAD: usize = 64;

/// `c = a · b` by [`row_dots_into`] when the product is dot products of contiguous rows
/// with one vector, as [`matmul_into`](super::matmul::matmul_into) computes them for
/// `Order::RowDots`: a matrix of contiguous rows times one column (`W·x`; the outputs go
/// down the column), or a row times a matrix whose columns are contiguous rows in memory
/// (`x·Wᵀ`; the outputs go along the row), several rows each as a one-row product of its own
/// ([`row_dots_many_into`]). Returns `false` and leaves `c` alone otherwise.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn row_dots_of_views(
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) -> bool {
    let (m, n) = (a.dim().0, b.dim().1);
    // With one column the outputs go down it (as in `matmul_into`'s loop), so `m = n = 1`
    // takes this branch too.
    let (rows, x, out) = if n == 1 {
        (a, b.column(0), c.column_mut(0))
    } else if m == 1 {
        (b.reversed_axes(), a.row(0), c.row_mut(0))
    } else {
        // Several rows, each its own one-row product `x·Wᵀ`: `W` read once for all of them.
        let (Some(rows), Some(out)) =
            (b.reversed_axes().to_slice(), c.as_slice_mut())
        else {
            return false;
        };
        let xs = match a.to_slice() {
            Some(contiguous) => Cow::Borrowed(contiguous),
            None => Cow::Owned(a.iter().copied().collect()),
        };
        row_dots_many_into(rows, &xs, m, out);
        return true;
    };
    let (Some(rows), Some(out)) = (rows.to_slice(), out.into_slice()) else {
        return false;
    };
    let x = match x.to_slice() {
        Some(contiguous) => Cow::Borrowed(contiguous),
        None => Cow::Owned(x.to_vec()),
    };
    row_dots_into(rows, &x, out);
    true
}

/// `out[i] = row_dot_sum(rows[i], x, i, count)` for each of the `count` outputs: MKL's
/// `sgemv` order, four outputs per pass over `x`, split between the threads of the current
/// rayon pool.
///
/// # Shapes
/// `rows`: `[count, k]` row-major, `x`: `[k]`, `out`: `[count]` (overwritten).
pub fn row_dots_into(rows: &[f32], x: &[f32], out: &mut [f32]) {
    row_dots_on_threads(rows, x, out, MIN_OUTPUTS_PER_THREAD);
}

/// [`row_dots_into`] with the outputs split between at most one thread per
/// `min_per_thread` outputs (the tests split small products this way).
///
/// # Shapes
/// As [`row_dots_into`].
fn row_dots_on_threads(
    rows: &[f32],
    x: &[f32],
    out: &mut [f32],
    min_per_thread: usize,
) {
    let (count, k) = (out.len(), x.len());
    assert_eq!(
        rows.len(),
        count * k,
        "row_dots: {count} rows of {k} entries"
    );
    let threads = rayon::current_num_threads()
        .min(count / min_per_thread.max(1))
        .max(1);
    if threads == 1 {
        row_dots_part(rows, x, 0, out, count);
        return;
    }
    // Whole blocks per thread, so that each pass still takes four outputs.
    let per_thread = count.div_ceil(threads).next_multiple_of(BLOCK);
    out.par_chunks_mut(per_thread)
        .enumerate()
        .for_each(|(part, out)| {
            let first = part * per_thread;
            let rows = &rows[first * k..(first + out.len()) * k];
            row_dots_part(rows, x, first, out, count);
        });
}

/// Rows of the matrix per task in [`row_dots_many_into`]: their weights (147 KB for 576
/// entries) stay in the cache while every vector is taken through them.
const ROWS_PER_TASK: usize = 64;

/// `out[j·count + i] = row_dot_sum(rows[i], xs[j], i, count)` for each of the `m` vectors
/// `xs[j]` and each of the `count` outputs: `m` one-row products `xs[j]·Wᵀ`, each output
/// with the bits [`row_dots_into`] gives it for that vector alone, but the matrix streamed
/// from memory once for all the vectors instead of once per vector. The matrix is taken a
/// few rows at a time, on every thread of the current rayon pool, and each vector goes
/// through those rows by [`row_dots_part`] with the outputs' own indices.
///
/// # Shapes
/// `rows`: `[count, k]` row-major, `xs`: `[m, k]` row-major, `out`: `[m, count]`
/// (overwritten).
pub fn row_dots_many_into(rows: &[f32], xs: &[f32], m: usize, out: &mut [f32]) {
    assert!(
        m > 0 && xs.len().is_multiple_of(m) && out.len().is_multiple_of(m),
        "row_dots_many: {} numbers are not {m} vectors, or {} outputs not {m} rows",
        xs.len(),
        out.len()
    );
    let (k, count) = (xs.len() / m, out.len() / m);
    assert_eq!(
        rows.len(),
        count * k,
        "row_dots_many: {count} rows of {k} entries"
    );
    if m == 1 {
        row_dots_into(rows, xs, out);
        return;
    }
    // Task `t` writes its `m` vectors' outputs side by side: `[m, len]` for its `len` rows.
    let mut parts = vec![0.0f32; m * count];
    parts
        .par_chunks_mut(m * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, part)| {
            let (first, len) = (task * ROWS_PER_TASK, part.len() / m);
            let rows = &rows[first * k..(first + len) * k];
            for (j, out) in part.chunks_exact_mut(len).enumerate() {
                row_dots_part(rows, &xs[j * k..(j + 1) * k], first, out, count);
            }
        });
    for (task, part) in parts.chunks(m * ROWS_PER_TASK).enumerate() {
        let (first, len) = (task * ROWS_PER_TASK, part.len() / m);
        for (j, outputs) in part.chunks_exact(len).enumerate() {
            out[j * count + first..j * count + first + len].copy_from_slice(outputs);
        }
    }
}

/// Outputs `first..first + out.len()` of `count`, on this thread, with the processor's
/// 16- or 8-lane vectors and fused multiply-add where it has them (without them, `f32::mul_add`
/// is a call to the C library's `fmaf`: the same bits, several times slower).
///
/// # Shapes
/// `rows`: `[out.len(), k]` row-major (the rows of these outputs), `x`: `[k]`.
pub fn row_dots_part(
    rows: &[f32],
    x: &[f32],
    first: usize,
    out: &mut [f32],
    count: usize,
) {
    assert!(
        rows.len() == out.len() * x.len() && first + out.len() <= count,
        "row_dots_part: {} numbers for {} rows of {}, outputs {first}.. of {count}",
        rows.len(),
        out.len(),
        x.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX-512F and the FMA instructions.
        unsafe { row_dots_part_avx512(rows, x, first, out, count) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { row_dots_part_fma(rows, x, first, out, count) };
        return;
    }
    row_dots_part_body(rows, x, first, out, count, four_dots);
}

/// [`row_dots_part_body`] compiled with AVX-512 and FMA, each block by [`four_dots_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn row_dots_part_avx512(
    rows: &[f32],
    x: &[f32],
    first: usize,
    out: &mut [f32],
    count: usize,
) {
    row_dots_part_body(rows, x, first, out, count, |block, x| {
        four_dots_avx512(block, x)
    });
}

/// [`row_dots_part_body`] compiled with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_dots_part_fma(
    rows: &[f32],
    x: &[f32],
    first: usize,
    out: &mut [f32],
    count: usize,
) {
    row_dots_part_body(rows, x, first, out, count, four_dots);
}

/// The loop of [`row_dots_part`]: the outputs of MKL's blocks four at a time by `block`
/// (any four of them: an output's order depends only on whether it is in a block, not on
/// which block), the one to three outputs of MKL's tail one at a time by [`row_dot_sum`].
#[inline(always)]
fn row_dots_part_body(
    rows: &[f32],
    x: &[f32],
    first: usize,
    out: &mut [f32],
    count: usize,
    block: impl Fn([&[f32]; BLOCK], &[f32]) -> [f32; BLOCK],
) {
    let k = x.len();
    let blocked = count / BLOCK * BLOCK;
    let mut i = 0;
    if k > 0 {
        while i + BLOCK <= out.len() && first + i + BLOCK <= blocked {
            let row = |b: usize| &rows[(i + b) * k..(i + b + 1) * k];
            out[i..i + BLOCK]
                .copy_from_slice(&block([row(0), row(1), row(2), row(3)], x));
            i += BLOCK;
        }
    }
    for (j, y) in out.iter_mut().enumerate().skip(i) {
        *y = row_dot_sum(&rows[j * k..(j + 1) * k], x, first + j, count);
    }
}

/// [`row_dot_sum`] for the four outputs of one of MKL's blocks, their rounds side by side.
///
/// # Shapes
/// Each of `block`: `[k]`, `x`: `[k]` with `k ≥ 1`.
#[inline(always)]
fn four_dots(block: [&[f32]; BLOCK], x: &[f32]) -> [f32; BLOCK] {
    let n = 16 * full_rounds(x.len());
    let mut lanes = block.map(|row| first_lanes(row, x));
    fused_rounds_4(&mut lanes, block.map(|row| &row[1..1 + n]), &x[1..1 + n]);
    std::array::from_fn(|b| finish_row_dot(lanes[b], block[b], x))
}

/// [`four_dots`] in 16-lane registers from start to end: each output's 16 lanes are one
/// register, its first product goes into lane 0, each round of 16 is one fused
/// multiply-add, the partial round one masked fused multiply-add into the first lanes, and
/// the four outputs' additions by halves are done together ([`add_by_halves_4`]). The same
/// operations on the same lanes, in the same order, as [`row_dot_sum`]: the same bits.
///
/// # Shapes
/// Each of `block`: `[k]`, `x`: `[k]` with `k ≥ 1`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn four_dots_avx512(block: [&[f32]; BLOCK], x: &[f32]) -> [f32; BLOCK] {
    use std::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_mask3_fmadd_ps, _mm512_maskz_loadu_ps,
        _mm512_maskz_mov_ps, _mm512_maskz_permutexvar_ps, _mm512_set1_epi32,
        _mm512_set1_ps,
    };
    let k = x.len();
    let (rounds, rest) = (full_rounds(k), (k - 1) % 16);
    // SAFETY: `[f32; 16]` and `__m512` are 64 bytes, and every bit pattern is valid in both.
    let round = |values: &[f32], r: usize| unsafe {
        let values: [f32; 16] = values[1 + 16 * r..17 + 16 * r].try_into().unwrap();
        std::mem::transmute::<[f32; 16], __m512>(values)
    };
    // The partial round's `rest` entries, zeros in the lanes after them.
    let partial = (1u16 << rest) - 1;
    let start = 1 + 16 * rounds;
    // SAFETY: the mask's lanes are entries `start..k` of `values` (`start + rest = k`),
    // inside it; the masked-off lanes are not read.
    let tail = |values: &[f32]| unsafe {
        _mm512_maskz_loadu_ps(partial, values[start..].as_ptr())
    };
    let mut lanes = [_mm512_set1_ps(0.0); BLOCK];
    for (lanes, row) in lanes.iter_mut().zip(block) {
        *lanes = _mm512_maskz_mov_ps(1, _mm512_set1_ps(row[0] * x[0]));
    }
    for r in 0..rounds {
        let v = round(x, r);
        for (lanes, row) in lanes.iter_mut().zip(block) {
            *lanes = _mm512_fmadd_ps(round(row, r), v, *lanes);
        }
    }
    if rest > 0 {
        if rounds > 0 {
            // Each output's sum alone in lane 0 of its register.
            let sums = add_by_halves_4(lanes);
            for (b, lanes) in lanes.iter_mut().enumerate() {
                *lanes = _mm512_maskz_permutexvar_ps(
                    1,
                    _mm512_set1_epi32(4 * b as i32),
                    sums,
                );
            }
        }
        let x_tail = tail(x);
        for (lanes, row) in lanes.iter_mut().zip(block) {
            *lanes = _mm512_mask3_fmadd_ps(tail(row), x_tail, *lanes, partial);
        }
    }
    // SAFETY: as `round`.
    let sums =
        unsafe { std::mem::transmute::<__m512, [f32; 16]>(add_by_halves_4(lanes)) };
    [sums[0], sums[4], sums[8], sums[12]]
}

/// `add_by_halves` of `dot_orders` on four registers at once: lane `i` plus lane `i + 8`,
/// then `i + 4`, `i + 2`, `i + 1`, each register's sum in lane `4·b` of the result.
/// Shuffles gather the halves of two (then four) registers side by side, so that each
/// step is one addition for all of them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn add_by_halves_4(
    lanes: [std::arch::x86_64::__m512; BLOCK],
) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::{_mm512_add_ps, _mm512_permute_ps, _mm512_shuffle_f32x4};
    // Quarters (4 lanes each) `[a0 a1 a2 a3]`: lower halves of a and b, then upper halves.
    let [a, b, c, d] = lanes;
    let ab = _mm512_add_ps(
        _mm512_shuffle_f32x4::<0x44>(a, b),
        _mm512_shuffle_f32x4::<0xEE>(a, b),
    );
    let cd = _mm512_add_ps(
        _mm512_shuffle_f32x4::<0x44>(c, d),
        _mm512_shuffle_f32x4::<0xEE>(c, d),
    );
    // Now quarter 0 of each register, then quarter 1: one quarter per output.
    let four = _mm512_add_ps(
        _mm512_shuffle_f32x4::<0x88>(ab, cd),
        _mm512_shuffle_f32x4::<0xDD>(ab, cd),
    );
    // Within each quarter: lanes 2 and 3 onto lanes 0 and 1, then lane 1 onto lane 0.
    let two = _mm512_add_ps(four, _mm512_permute_ps::<0x4E>(four));
    _mm512_add_ps(two, _mm512_permute_ps::<0xB1>(two))
}

/// `lanes[b][l] = fma(rows[b][16·r + l], x[16·r + l], lanes[b][l])` for each round `r` of
/// 16 and each of the four rows `b`: the rounds of [`row_dot_sum`]'s `fused_rounds` for
/// four outputs at once, each round of `x` loaded once.
///
/// # Shapes
/// `x`: a multiple of 16 long, each of `rows` at least as long.
#[inline(always)]
fn fused_rounds_4(lanes: &mut [[f32; 16]; BLOCK], rows: [&[f32]; BLOCK], x: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { fused_rounds_4_avx2(lanes, rows, x) };
        return;
    }
    for (r, v) in x.chunks_exact(16).enumerate() {
        for (lanes, row) in lanes.iter_mut().zip(rows) {
            for lane in 0..16 {
                lanes[lane] = row[16 * r + lane].mul_add(v[lane], lanes[lane]);
            }
        }
    }
}

/// [`fused_rounds_4`] in eight 8-lane registers, two per output.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fused_rounds_4_avx2(
    lanes: &mut [[f32; 16]; BLOCK],
    rows: [&[f32]; BLOCK],
    x: &[f32],
) {
    use std::arch::x86_64::{__m256, _mm256_fmadd_ps};
    // Loads go through `[f32; 8]` references, not `_mm256_loadu_ps`: in the dev profile
    // that intrinsic's copy checks its pointers on every load, several times the load.
    let halves = |values: &[f32]| -> ([f32; 8], [f32; 8]) {
        let (low, high) = values.split_at(8);
        (low.try_into().unwrap(), high.try_into().unwrap())
    };
    // SAFETY: `[f32; 8]` and `__m256` are 32 bytes, and every bit pattern is valid in both.
    let vector =
        |values: [f32; 8]| unsafe { std::mem::transmute::<[f32; 8], __m256>(values) };
    let mut acc = lanes.map(|lanes| {
        let (low, high) = halves(&lanes);
        [vector(low), vector(high)]
    });
    let rounds = x.len() / 16;
    for r in 0..rounds {
        let (low, high) = halves(&x[16 * r..16 * r + 16]);
        let (low, high) = (vector(low), vector(high));
        for (acc, row) in acc.iter_mut().zip(rows) {
            let (w_low, w_high) = halves(&row[16 * r..16 * r + 16]);
            acc[0] = _mm256_fmadd_ps(vector(w_low), low, acc[0]);
            acc[1] = _mm256_fmadd_ps(vector(w_high), high, acc[1]);
        }
    }
    for (lanes, acc) in lanes.iter_mut().zip(acc) {
        // SAFETY: as `vector`: two 32-byte vectors are 16 floats.
        *lanes = unsafe { std::mem::transmute::<[__m256; 2], [f32; 16]>(acc) };
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `len` values of varied magnitudes (so that a changed order shows in the last bits),
    /// from a small linear congruential generator.
    pub(in crate::kernels) fn values(seed: u64, len: usize) -> Vec<f32> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let unit = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                unit * 2f32.powi((state >> 20) as i32 % 9 - 4)
            })
            .collect()
    }

    pub(in crate::kernels) fn bits(values: &[f32]) -> Vec<u32> {
        values.iter().map(|v| v.to_bits()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn four_outputs_per_pass_keep_each_outputs_bits_on_any_threads(
            k in 0usize..=200,
            count in 1usize..=40,
            threads in 1usize..=3,
            seed in any::<u64>(),
        ) {
            let rows = values(seed, count * k);
            let x = values(seed ^ 0x5eed, k);
            let expected: Vec<f32> = (0..count)
                .map(|i| row_dot_sum(&rows[i * k..(i + 1) * k], &x, i, count))
                .collect();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // Split down to one output per thread, so that small products use every thread.
            let mut split = vec![f32::NAN; count];
            pool.install(|| row_dots_on_threads(&rows, &x, &mut split, 1));
            prop_assert_eq!(bits(&split), bits(&expected));
            let mut whole = vec![f32::NAN; count];
            pool.install(|| row_dots_into(&rows, &x, &mut whole));
            prop_assert_eq!(bits(&whole), bits(&expected));
            // The blocks without 16-lane registers too (this processor may have them).
            if k > 0 {
                for (b, expected) in expected.chunks_exact(BLOCK).take(count / BLOCK).enumerate() {
                    let row = |i: usize| &rows[(BLOCK * b + i) * k..(BLOCK * b + i + 1) * k];
                    let got = four_dots([row(0), row(1), row(2), row(3)], &x);
                    prop_assert_eq!(bits(&got), bits(expected));
                }
            }
        }

        #[test]
        fn many_vectors_keep_each_vectors_one_row_bits(
            k in 0usize..=200,
            count in 1usize..=200,
            m in 1usize..=6,
            threads in 1usize..=3,
            seed in any::<u64>(),
        ) {
            let rows = values(seed, count * k);
            let xs = values(seed ^ 0x5eed, m * k);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut expected = vec![f32::NAN; m * count];
            for (j, out) in expected.chunks_exact_mut(count).enumerate() {
                pool.install(|| row_dots_into(&rows, &xs[j * k..(j + 1) * k], out));
            }
            let mut many = vec![f32::NAN; m * count];
            pool.install(|| row_dots_many_into(&rows, &xs, m, &mut many));
            prop_assert_eq!(bits(&many), bits(&expected));
        }
    }
}
