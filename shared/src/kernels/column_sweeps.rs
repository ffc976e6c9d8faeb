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
//! [`column_sweep_sum`] stays the reference: the tests below hold this kernel to it.

use std::borrow::Cow;

use ndarray::{ArrayView2, ArrayViewMut2};

#[cfg(test)]
use super::dot_orders::column_sweep_sum;

/// Outputs per block, as MKL sweeps them.
const BLOCK: usize = 16;

/// `c = a · b` by [`column_sweeps_into`] when `a` is one row and every row of `b` is
/// contiguous, as [`matmul_into`](super::matmul::matmul_into) computes `Order::ColumnSweeps`
/// (the outputs along the row). Returns `false` and leaves `c` alone otherwise.
///
/// # Shapes
/// `a`: `[1, k]`, `b`: `[k, n]`, `c`: `[1, n]` (overwritten).
pub fn column_sweeps_of_views(
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) -> bool {
    let (m, n) = (a.dim().0, b.dim().1);
    if m != 1 || n < 2 {
        return false;
    }
    // A matrix in one piece (the cached values) is cut into rows directly, faster than
    // taking its rows one by one as views.
    let rows: Option<Vec<&[f32]>> = match b.to_slice() {
        Some(all) => Some(all.chunks_exact(n).collect()),
        None => b.rows().into_iter().map(|r| r.to_slice()).collect(),
    };
    let (Some(rows), Some(out)) = (rows, c.row_mut(0).into_slice()) else {
        return false;
    };
    let x = match a.row(0).to_slice() {
        Some(contiguous) => Cow::Borrowed(contiguous),
        None => Cow::Owned(a.row(0).to_vec()),
    };
    column_sweeps_into(&rows, &x, out);
    true
}

/// `out[j] = column_sweep_sum(column j of rows, x, j, n)` for each of the `n` outputs, with
/// the processor's 16- or 8-lane vectors and fused multiply-add where it has them (without
/// them, `f32::mul_add` is a call to the C library's `fmaf`: the same bits, several times
/// slower).
///
/// # Shapes
/// `rows`: `k` rows of at least `n` entries, `x`: `[k]`, `out`: `[n]` (overwritten).
pub fn column_sweeps_into(rows: &[&[f32]], x: &[f32], out: &mut [f32]) {
    assert_eq!(rows.len(), x.len(), "column_sweeps: one row per entry of x");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX-512F and the FMA instructions.
        unsafe { column_sweeps_avx512(rows, x, out) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { column_sweeps_fma(rows, x, out) };
        return;
    }
    column_sweeps_body(rows, x, out);
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

/// The loop of [`column_sweeps_into`]: each lane an output, in [`column_sweep_sum`]'s order.
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

/// [`column_sweeps_body`] in 16-lane registers, one block of 16 outputs per register, and
/// four blocks in one pass down the rows: each row is read once for 64 outputs, and the
/// four blocks' chains advance side by side instead of one after another.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn column_sweeps_avx512(rows: &[&[f32]], x: &[f32], out: &mut [f32]) {
    let blocked = blocked_outputs(x.len(), out.len());
    let mut first = 0;
    while first + 4 * BLOCK <= blocked {
        sweep_blocks_avx512::<4>(rows, x, first, &mut out[first..first + 4 * BLOCK]);
        first += 4 * BLOCK;
    }
    while first < blocked {
        sweep_blocks_avx512::<1>(rows, x, first, &mut out[first..first + BLOCK]);
        first += BLOCK;
    }
    fused_tail(rows, x, blocked, out);
}

/// `B` blocks of 16 outputs from column `first` on, in [`column_sweep_sum`]'s order: lane
/// `l` of register `j` is output `first + 16·j + l`.
///
/// # Shapes
/// `rows`: `k ≥ 8` rows of at least `first + 16·B` entries, `x`: `[k]`, `out`: `[16·B]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn sweep_blocks_avx512<const B: usize>(
    rows: &[&[f32]],
    x: &[f32],
    first: usize,
    out: &mut [f32],
) {
    use std::arch::x86_64::{
        __m512, _mm512_add_ps, _mm512_fmadd_ps, _mm512_mul_ps, _mm512_set1_ps,
        _mm512_setzero_ps,
    };
    // Plain loops rather than closures here: a closure is not always inlined into a
    // function compiled for AVX-512, and a call per load costs more than the load.
    let mut y = [_mm512_setzero_ps(); B];
    let (groups, zero) = (x.len() / 8, _mm512_setzero_ps());
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
    for (row, &v) in rows.iter().zip(x).skip(8 * groups) {
        let v = _mm512_set1_ps(v);
        for (j, y) in y.iter_mut().enumerate() {
            *y = _mm512_fmadd_ps(lanes_avx512(&row[first + BLOCK * j..]), v, *y);
        }
    }
    for (y, out) in y.into_iter().zip(out.chunks_exact_mut(BLOCK)) {
        // SAFETY: as in `lanes_avx512`.
        let y = unsafe { std::mem::transmute::<__m512, [f32; BLOCK]>(y) };
        out.copy_from_slice(&y);
    }
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
            k in 0usize..=70,
            // Up to eight blocks and a tail: four blocks in one pass, and blocks alone.
            n in 2usize..=140,
            // Rows wider than the matrix: a view of the first `n` columns, as a cache
            // of keys is a view of a larger buffer.
            extra in 0usize..=3,
            seed in any::<u64>(),
        ) {
            let wide = Array2::from_shape_vec((k, n + extra), values(seed, k * (n + extra)))
                .unwrap();
            let b = wide.slice(ndarray::s![.., ..n]);
            let x = Array2::from_shape_vec((1, k), values(!seed, k)).unwrap();
            let expected: Vec<f32> = (0..n)
                .map(|j| column_sweep_sum(&b.column(j).to_vec(), x.as_slice().unwrap(), j, n))
                .collect();
            let mut got = Array2::from_elem((1, n), f32::NAN);
            prop_assert!(column_sweeps_of_views(x.view(), b, got.view_mut()));
            prop_assert_eq!(bits(got.as_slice().unwrap()), bits(&expected), "k {}, n {}", k, n);
            // Without 16-lane registers too (this processor may have them).
            let rows: Vec<&[f32]> = wide.rows().into_iter().map(|r| r.to_slice().unwrap()).collect();
            let mut plain = vec![f32::NAN; n];
            column_sweeps_body(&rows, x.as_slice().unwrap(), &mut plain);
            prop_assert_eq!(bits(&plain), bits(&expected), "k {}, n {}", k, n);
        }
    }

    #[test]
    fn other_layouts_are_left_to_the_loop() {
        let b = Array2::from_shape_vec((3, 4), values(1, 12)).unwrap();
        let mut c = Array2::from_elem((2, 4), f32::NAN);
        let two_rows = Array2::from_shape_vec((2, 3), values(2, 6)).unwrap();
        assert!(!column_sweeps_of_views(
            two_rows.view(),
            b.view(),
            c.view_mut()
        ));
        let mut one = Array2::from_elem((1, 3), f32::NAN);
        let x = Array2::from_shape_vec((1, 4), values(3, 4)).unwrap();
        // `bᵀ`'s rows are strided.
        assert!(!column_sweeps_of_views(x.view(), b.t(), one.view_mut()));
        assert!(one.iter().all(|v| v.is_nan()));
    }
}
