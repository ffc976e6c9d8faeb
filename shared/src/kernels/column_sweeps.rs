//! MKL's `sgemv` order for one row times a matrix whose rows lie contiguous in memory (`x·W`,
//! and in a decoding step the attention weights times the cached values), 16 outputs per
//! pass down the matrix.
//!
//! [`column_sweep_sum`] computes one output at a time from its column, which such a matrix
//! holds strided: every entry of the column is a load of its own, and the matrix is read
//! once per output. Here the 16 outputs of one of MKL's blocks advance side by side, one
//! lane each: each group of 8 rows is read once, 16 contiguous entries of each row at a
//! time, and each lane does what [`column_sweep_sum`] does for its output, in its order, so
//! every output has the same bits. The outputs after the last block are fused chains, also
//! side by side.
//!
//! Several rows times the same matrix, each a one-row product of its own (the query heads
//! that share one head of cached values), go through the matrix together, a stretch of rows
//! at a time, so that the matrix comes from memory once for all of them.
//!
//! [`column_sweep_sum`] stays the reference: the tests below hold this kernel to it.

use std::borrow::Cow;

use ndarray::{ArrayView2, ArrayViewMut2};

#[cfg(test)]
use super::dot_orders::column_sweep_sum;

/// Outputs per block, as MKL sweeps them.
const BLOCK: usize = 16;

/// `c = a · b` by [`column_sweeps_many_into`] when every row of `b` is contiguous, each row
/// of `a` multiplied as a one-row product of its own, as
/// [`matmul_into`](super::matmul::matmul_into) computes `Order::ColumnSweeps` (the outputs
/// along the row). Returns `false` and leaves `c` alone otherwise.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn column_sweeps_of_views(
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) -> bool {
    let (m, n) = (a.dim().0, b.dim().1);
    if m == 0 || n < 2 {
        return false;
    }
    // A matrix in one piece (the cached values) is cut into rows directly, faster than
    // taking its rows one by one as views.
    let rows: Option<Vec<&[f32]>> = match b.to_slice() {
        Some(all) => Some(all.chunks_exact(n).collect()),
        None => b.rows().into_iter().map(|r| r.to_slice()).collect(),
    };
    let (Some(rows), Some(out)) = (rows, c.as_slice_mut()) else {
        return false;
    };
    let xs = match a.to_slice() {
        Some(contiguous) => Cow::Borrowed(contiguous),
        None => Cow::Owned(a.iter().copied().collect()),
    };
    column_sweeps_many_into(&rows, &xs, m, out);
    true
}

/// `out[i·n + j] = column_sweep_sum(column j of rows, xs[i], j, n)` for each of the `m`
/// vectors `xs[i]` and each of the `n` outputs: `m` one-row products `xs[i]·W`, each with
/// the bits it has alone, with the processor's 16- or 8-lane vectors and fused
/// multiply-add where it has them (without them, `f32::mul_add` is a call to the C
/// library's `fmaf`: the same bits, several times slower). With 16 lanes the vectors go
/// through the matrix together, a few rows at a time, so that the matrix comes from memory
/// once for all of them (the query heads that share one head of cached values).
///
/// # Shapes
/// `rows`: `k` rows of at least `n` entries, `xs`: `[m, k]` row-major, `out`: `[m, n]`
/// (overwritten, row-major).
pub fn column_sweeps_many_into(
    rows: &[&[f32]],
    xs: &[f32],
    m: usize,
    out: &mut [f32],
) {
    assert!(
        m > 0 && xs.len() == m * rows.len() && out.len().is_multiple_of(m),
        "column_sweeps_many: {} numbers are not {m} vectors of {}, or {} outputs not {m} rows",
        xs.len(),
        rows.len(),
        out.len()
    );
    if rows.is_empty() {
        out.fill(0.0); // empty sums
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX-512F and the FMA instructions.
        unsafe { column_sweeps_avx512(rows, xs, m, out) };
        return;
    }
    let (k, n) = (rows.len(), out.len() / m);
    for (x, out) in xs.chunks_exact(k.max(1)).zip(out.chunks_exact_mut(n)) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the processor has AVX2 and the FMA instructions.
            unsafe { column_sweeps_fma(rows, &x[..k], out) };
            continue;
        }
        column_sweeps_body(rows, &x[..k], out);
    }
}

/// [`column_sweeps_body`] compiled with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn column_sweeps_fma(rows: &[&[f32]], x: &[f32], out: &mut [f32]) {
    column_sweeps_body(rows, x, out);
}

/// The outputs in MKL's blocks: how many of the `n` outputs of a sweep over `k` rows.
fn blocked_outputs(k: usize, n: usize) -> usize {
    if k < 8 { 0 } else { n / BLOCK * BLOCK }
}

/// The loop of [`column_sweeps_many_into`] for one vector: each lane an output, in [`column_sweep_sum`]'s order.
#[inline(always)]
fn column_sweeps_body(rows: &[&[f32]], x: &[f32], out: &mut [f32]) {
    let blocked = blocked_outputs(x.len(), out.len());
    let groups = x.len() / 8;
    for first in (0..blocked).step_by(BLOCK) {
        let lanes = |r: usize| -> &[f32; BLOCK] {
            rows[r][first..first + BLOCK]
                .try_into()
                .expect("16 entries")
        };
        let mut y = [0.0f32; BLOCK];
        for g in 0..groups {
            let b: [&[f32; BLOCK]; 8] = std::array::from_fn(|i| lanes(8 * g + i));
            let v = &x[8 * g..8 * g + 8];
            for l in 0..BLOCK {
                let even_high = b[4][l].mul_add(v[4], b[6][l].mul_add(v[6], y[l]));
                let odd_high = b[5][l].mul_add(v[5], b[7][l] * v[7]);
                let even_low = b[0][l].mul_add(v[0], b[2][l] * v[2]);
                let odd_low = b[1][l].mul_add(v[1], b[3][l] * v[3]);
                y[l] = (even_high + odd_high) + (even_low + odd_low);
            }
        }
        for (r, &v) in x.iter().enumerate().skip(8 * groups) {
            for (y, &b) in y.iter_mut().zip(lanes(r)) {
                *y = b.mul_add(v, *y);
            }
        }
        out[first..first + BLOCK].copy_from_slice(&y);
    }
    fused_tail(rows, x, blocked, out);
}

/// The outputs after the last block, `out[blocked..]`: fused chains in order of the rows.
#[inline(always)]
fn fused_tail(rows: &[&[f32]], x: &[f32], blocked: usize, out: &mut [f32]) {
    let tail = &mut out[blocked..];
    if tail.is_empty() {
        return;
    }
    tail.fill(0.0);
    for (row, &v) in rows.iter().zip(x) {
        for (y, &b) in tail.iter_mut().zip(&row[blocked..]) {
            *y = b.mul_add(v, *y);
        }
    }
}

/// Groups of 8 rows that the vectors of [`column_sweeps_avx512`] go through before the next
/// groups: 64 rows, 16 KB of a 64-wide matrix, stay in the first-level cache from the first
/// vector to the last.
#[cfg(target_arch = "x86_64")]
const GROUPS_PER_STRETCH: usize = 8;

/// Bytes of the matrix brought into the second-level cache by a plain read before they are
/// swept (a quarter of a megabyte: half of the smallest such cache of a processor with
/// 16-lane vectors).
#[cfg(target_arch = "x86_64")]
const PIECE_BYTES: usize = 256 * 1024;

/// [`column_sweeps_body`] in 16-lane registers for every vector of `xs`: four blocks of
/// 16 outputs per pass down the rows (each row read once for 64 outputs, the four blocks'
/// chains side by side), then one block at a time, then the fused chains of the tail.
///
/// # Shapes
/// `rows`: `k ≥ 1` rows of at least `n` entries, `xs`: `[m, k]`, `out`: `[m, n]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn column_sweeps_avx512(rows: &[&[f32]], xs: &[f32], m: usize, out: &mut [f32]) {
    let (k, n) = (rows.len(), out.len() / m);
    let blocked = blocked_outputs(k, n);
    let mut first = 0;
    while first + 4 * BLOCK <= blocked {
        sweep_blocks_avx512::<4>(rows, xs, first, n, out);
        first += 4 * BLOCK;
    }
    while first < blocked {
        sweep_blocks_avx512::<1>(rows, xs, first, n, out);
        first += BLOCK;
    }
    for (x, out) in xs.chunks_exact(k).zip(out.chunks_exact_mut(n)) {
        fused_tail(rows, x, blocked, out);
    }
}

/// `B` blocks of 16 outputs from column `first` on for each vector of `xs`, in
/// [`column_sweep_sum`]'s order: lane `l` of register `j` of vector `i` is output
/// `out[i·n + first + 16·j + l]`.
///
/// The rows are taken a piece at a time: a plain read brings the piece's entries into the
/// cache, then the vectors sweep it a stretch at a time, each carrying its own sums. (The
/// plain read runs far ahead of memory; the sweeps' chains of additions do not, and, on
/// the processors measured, read a long matrix straight from memory at about half the
/// speed.)
///
/// # Shapes
/// `rows`: `k ≥ 8` rows of at least `first + 16·B` entries, `xs`: `[m, k]`, `out`: `[m, n]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn sweep_blocks_avx512<const B: usize>(
    rows: &[&[f32]],
    xs: &[f32],
    first: usize,
    n: usize,
    out: &mut [f32],
) {
    use std::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_setzero_ps,
    };
    let k = rows.len();
    let mut sums = vec![[_mm512_setzero_ps(); B]; xs.len() / k];
    let whole = k / 8 * 8;
    let stretch = 8 * GROUPS_PER_STRETCH;
    let piece = (PIECE_BYTES / (64 * B)).next_multiple_of(stretch);
    for piece_start in (0..whole).step_by(piece) {
        let piece_end = whole.min(piece_start + piece);
        bring_into_cache::<B>(&rows[piece_start..piece_end], first);
        for start in (piece_start..piece_end).step_by(stretch) {
            let end = piece_end.min(start + stretch);
            for (y, x) in sums.iter_mut().zip(xs.chunks_exact(k)) {
                sweep_groups_avx512(&rows[start..end], &x[start..end], first, y);
            }
        }
    }
    for (y, x) in sums.iter_mut().zip(xs.chunks_exact(k)) {
        for (row, &v) in rows[whole..].iter().zip(&x[whole..]) {
            let v = _mm512_set1_ps(v);
            for (j, y) in y.iter_mut().enumerate() {
                *y = _mm512_fmadd_ps(lanes_avx512(&row[first + BLOCK * j..]), v, *y);
            }
        }
    }
    for (y, out) in sums.into_iter().zip(out.chunks_exact_mut(n)) {
        for (y, out) in y.into_iter().zip(out[first..].chunks_exact_mut(BLOCK)) {
            // SAFETY: as in `lanes_avx512`.
            let y = unsafe { std::mem::transmute::<__m512, [f32; BLOCK]>(y) };
            out.copy_from_slice(&y);
        }
    }
}

/// Reads the `16·B` entries from column `first` of each row, a plain read with nothing
/// waiting on it, so that the next sweep finds them in the cache.
///
/// # Shapes
/// `rows`: rows of at least `first + 16·B` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn bring_into_cache<const B: usize>(rows: &[&[f32]], first: usize) {
    use std::arch::x86_64::{_mm512_add_ps, _mm512_setzero_ps};
    // Four independent sums, so that no load waits for another.
    let mut sink = [_mm512_setzero_ps(); 4];
    for four in rows.chunks(4) {
        for (sink, row) in sink.iter_mut().zip(four) {
            for j in 0..B {
                *sink = _mm512_add_ps(*sink, lanes_avx512(&row[first + BLOCK * j..]));
            }
        }
    }
    std::hint::black_box(sink);
}

/// One vector's `B` blocks of sums `y` carried through whole groups of 8 rows, in
/// [`column_sweep_sum`]'s order.
///
/// # Shapes
/// `rows`: a multiple of 8 rows of at least `first + 16·B` entries, `x`: one entry per row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
#[inline]
fn sweep_groups_avx512<const B: usize>(
    rows: &[&[f32]],
    x: &[f32],
    first: usize,
    sums: &mut [std::arch::x86_64::__m512; B],
) {
    use std::arch::x86_64::{
        _mm512_add_ps, _mm512_fmadd_ps, _mm512_mul_ps, _mm512_set1_ps,
        _mm512_setzero_ps,
    };
    // Plain loops rather than closures here: a closure is not always inlined into a
    // function compiled for AVX-512, and a call per load costs more than the load.
    let zero = _mm512_setzero_ps();
    // The sums in registers while they advance, not behind the reference.
    let mut y = *sums;
    for (group, v) in rows.chunks_exact(8).zip(x.chunks_exact(8)) {
        let mut v8 = [zero; 8];
        for (v8, &v) in v8.iter_mut().zip(v) {
            *v8 = _mm512_set1_ps(v);
        }
        // Each row's `16·B` entries, checked once, so that the loads need no checks.
        let mut checked: [&[f32]; 8] = [&[]; 8];
        for (checked, row) in checked.iter_mut().zip(group) {
            *checked = &row[first..first + BLOCK * B];
        }
        for (j, y) in y.iter_mut().enumerate() {
            let mut b = [zero; 8];
            for (b, row) in b.iter_mut().zip(checked) {
                *b = lanes_avx512(&row[BLOCK * j..]);
            }
            let even_high =
                _mm512_fmadd_ps(b[4], v8[4], _mm512_fmadd_ps(b[6], v8[6], *y));
            let odd_high = _mm512_fmadd_ps(b[5], v8[5], _mm512_mul_ps(b[7], v8[7]));
            let even_low = _mm512_fmadd_ps(b[0], v8[0], _mm512_mul_ps(b[2], v8[2]));
            let odd_low = _mm512_fmadd_ps(b[1], v8[1], _mm512_mul_ps(b[3], v8[3]));
            *y = _mm512_add_ps(
                _mm512_add_ps(even_high, odd_high),
                _mm512_add_ps(even_low, odd_low),
            );
        }
    }
    *sums = y;
}

/// The first 16 numbers of `values` in a register (a plain copy: no instruction set needed).
///
/// # Shapes
/// `values`: at least 16 numbers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes_avx512(values: &[f32]) -> std::arch::x86_64::__m512 {
    let lanes: [f32; BLOCK] = values[..BLOCK].try_into().expect("16 numbers");
    // SAFETY: `[f32; 16]` and `__m512` are 64 bytes, and every bit pattern is valid in both.
    unsafe { std::mem::transmute::<[f32; BLOCK], std::arch::x86_64::__m512>(lanes) }
}

#[cfg(test)]
mod tests {
    use super::super::row_dots::tests::{bits, values};
    use super::*;
    use ndarray::Array2;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn sixteen_outputs_per_pass_keep_each_outputs_bits(
            k in 0usize..=150,
            // Up to eight blocks and a tail: four blocks in one pass, and blocks alone.
            n in 2usize..=140,
            // Rows wider than the matrix: a view of the first `n` columns, as a cache
            // of keys is a view of a larger buffer.
            extra in 0usize..=3,
            // Several vectors through the matrix together, as the query heads that share
            // a head of cached values: each with the bits it has alone.
            m in 1usize..=4,
            seed in any::<u64>(),
        ) {
            let wide = Array2::from_shape_vec((k, n + extra), values(seed, k * (n + extra)))
                .unwrap();
            let b = wide.slice(ndarray::s![.., ..n]);
            let xs = Array2::from_shape_vec((m, k), values(!seed, m * k)).unwrap();
            let expected: Vec<f32> = xs
                .rows()
                .into_iter()
                .flat_map(|x| {
                    let x = x.to_vec();
                    (0..n).map(move |j| column_sweep_sum(&b.column(j).to_vec(), &x, j, n))
                })
                .collect();
            let mut got = Array2::from_elem((m, n), f32::NAN);
            prop_assert!(column_sweeps_of_views(xs.view(), b, got.view_mut()));
            prop_assert_eq!(bits(got.as_slice().unwrap()), bits(&expected), "k {}, n {}, m {}", k, n, m);
            // Without 16-lane registers too (this processor may have them).
            let rows: Vec<&[f32]> = wide.rows().into_iter().map(|r| r.to_slice().unwrap()).collect();
            let mut plain = vec![f32::NAN; n];
            column_sweeps_body(&rows, xs.row(0).as_slice().unwrap(), &mut plain);
            prop_assert_eq!(bits(&plain), bits(&expected[..n]), "k {}, n {}", k, n);
        }
    }

    /// A cache of 2100 values for three query heads: more rows than one piece that is
    /// brought into the cache at a time, and a last group of four rows.
    #[test]
    fn a_long_matrix_in_pieces_keeps_each_outputs_bits() {
        let (k, n, m) = (2100, 64, 3);
        let b = Array2::from_shape_vec((k, n), values(7, k * n)).unwrap();
        let xs = Array2::from_shape_vec((m, k), values(8, m * k)).unwrap();
        let mut got = Array2::from_elem((m, n), f32::NAN);
        assert!(column_sweeps_of_views(xs.view(), b.view(), got.view_mut()));
        for (i, x) in xs.rows().into_iter().enumerate() {
            let x = x.to_vec();
            for j in 0..n {
                let expected = column_sweep_sum(&b.column(j).to_vec(), &x, j, n);
                assert_eq!(
                    got[[i, j]].to_bits(),
                    expected.to_bits(),
                    "vector {i}, output {j}: {} against {expected}",
                    got[[i, j]]
                );
            }
        }
    }

    #[test]
    fn other_layouts_are_left_to_the_loop() {
        let b = Array2::from_shape_vec((3, 4), values(1, 12)).unwrap();
        let mut one = Array2::from_elem((1, 3), f32::NAN);
        let x = Array2::from_shape_vec((1, 4), values(3, 4)).unwrap();
        // `bᵀ`'s rows are strided.
        assert!(!column_sweeps_of_views(x.view(), b.t(), one.view_mut()));
        assert!(one.iter().all(|v| v.is_nan()));
        // So are the rows of a transposed output.
        let two_rows = Array2::from_shape_vec((2, 3), values(2, 6)).unwrap();
        let mut c = Array2::from_elem((4, 2), f32::NAN);
        assert!(!column_sweeps_of_views(
            two_rows.view(),
            b.view(),
            c.view_mut().reversed_axes()
        ));
        assert!(c.iter().all(|v| v.is_nan()));
    }
}
