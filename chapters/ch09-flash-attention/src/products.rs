//! The small matrix products of the backward pass, `c += a · b`, in vector registers.
//!
//! The backward pass ([`crate::backward`]) multiplies five pairs of small matrices per
//! tile: queries by keys, output gradients by values, and three products with a tile of
//! weights or of score gradients, once of them transposed. All five are the same loop:
//! for a block of `R` rows of `c` and `C` vectors of its columns, hold the `R × C` sums in
//! registers, and for each step `p` of the inner dimension load `C` vectors of row `p` of
//! `b` once and add `a[r][p]` times them to every row `r`. The only difference between the
//! five is where `a`'s numbers lie, so `a` is read through two strides: one from row to row,
//! one along the inner dimension. A transposed operand is then the same matrix with its
//! strides swapped, and no tile is ever copied to transpose it.

use shared::simd::Simd;

/// Where the numbers of a matrix lie in a slice: element `(i, p)` is at `i·row + p·step`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a> {
    /// The numbers.
    pub data: &'a [f32],
    /// Distance from one row to the next.
    pub row: usize,
    /// Distance from one column to the next.
    pub step: usize,
}

impl<'a> Strided<'a> {
    /// A row-major matrix whose rows are `row` floats apart.
    pub fn by_rows(data: &'a [f32], row: usize) -> Self {
        Strided { data, row, step: 1 }
    }

    /// The transpose of a row-major matrix whose rows are `step` floats apart.
    pub fn by_columns(data: &'a [f32], step: usize) -> Self {
        Strided { data, row: 1, step }
    }
}

/// `c[i][..n] += Σ_p a(i, p) · b[p][..n]` for `i < m`, `p < k`: `b = (numbers, ldb)` is
/// `[k, ldb]` and `c = (numbers, ldc)` is `[m, ldc]`, row major, `n` a multiple of
/// `S::LANES`. `R` rows at a time with `C` vectors of columns, then the rows and columns
/// left over one at a time.
///
/// # Shapes
/// `a`: `m × k` through its strides, `b`: `[k, ldb]`, `c`: `[m, ldc]`, with `n <= ldb, ldc`.
// ANCHOR: add_product
#[inline(always)]
pub fn add_product<S: Simd, const R: usize, const C: usize>(
    simd: S,
    a: Strided<'_>,
    (b, ldb): (&[f32], usize),
    (c, ldc): (&mut [f32], usize),
    (m, k, n): (usize, usize, usize),
) {
    debug_assert_eq!(n % S::LANES, 0);
    let mut row = 0;
    while row + R <= m {
        columns::<S, R, C>(simd, a, b, ldb, c, ldc, row, k, n);
        row += R;
    }
    while row < m {
        columns::<S, 1, C>(simd, a, b, ldb, c, ldc, row, k, n);
        row += 1;
    }
}
// ANCHOR_END: add_product

/// [`add_product`] for the `R` rows from `row`, all `n` columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn columns<S: Simd, const R: usize, const C: usize>(
    simd: S,
    a: Strided<'_>,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
    row: usize,
    k: usize,
    n: usize,
) {
    let mut col = 0;
    while col + C * S::LANES <= n {
        block::<S, R, C>(simd, a, b, ldb, c, ldc, (row, col), k);
        col += C * S::LANES;
    }
    while col < n {
        block::<S, R, 1>(simd, a, b, ldb, c, ldc, (row, col), k);
        col += S::LANES;
    }
}

/// The `R × C` vectors of `c` from `(row, col)`: the `k` steps of the inner dimension
/// summed in registers, then added to `c`.
// ANCHOR: block
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block<S: Simd, const R: usize, const C: usize>(
    simd: S,
    a: Strided<'_>,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
    (row, col): (usize, usize),
    k: usize,
) {
    let lanes = S::LANES;
    let mut sums = [[simd.splat(0.0); C]; R];
    let a_start = row * a.row;
    for p in 0..k {
        let b_row = &b[p * ldb + col..][..C * lanes];
        let mut x = [simd.splat(0.0); C];
        for (i, x) in x.iter_mut().enumerate() {
            *x = simd.load(&b_row[i * lanes..]);
        }
        let a_p = a_start + p * a.step;
        for (r, sum) in sums.iter_mut().enumerate() {
            let a_rp = simd.splat(a.data[a_p + r * a.row]);
            for (s, &x) in sum.iter_mut().zip(&x) {
                *s = simd.mul_add(a_rp, x, *s);
            }
        }
    }
    // Added to `c` only now: a long sum over many tiles then adds one rounded
    // partial sum per tile, not every product one after the other, so that its
    // rounding error grows with the number of tiles, not of terms, at no cost.
    for (r, sum) in sums.iter().enumerate() {
        for (i, &s) in sum.iter().enumerate() {
            let at = (row + r) * ldc + col + i * lanes;
            simd.store(simd.add(simd.load(&c[at..]), s), &mut c[at..]);
        }
    }
}
// ANCHOR_END: block
