//! The sums down the columns of a row-major matrix (`x.sum(0)` of `[rows, columns]`, a bias
//! gradient), in PyTorch's order, read where the values lie.
//!
//! PyTorch adds such a sum with vectors across the columns: every column is its own chain,
//! a [`cascade`](super) over the rows for the columns in whole groups of 32,
//! the four interleaved cascades of `row_sum` for the columns after them. The general walk
//! of [`cascade_sum`](super) first copies the matrix into column order and then
//! adds each column alone; here every step of the cascades adds a whole row to the sums of
//! all columns at once. Each column still adds its own values in its own order, so the
//! bits are the same, and the row is a plain run of memory that the compiler turns into
//! vector additions.

use std::ops::Range;

use super::ceil_log2;

/// Columns per group that PyTorch sums with a plain cascade each.
const GROUP: usize = 32;

/// PyTorch's sum down each column of `x`, a row-major `[rows, columns]` matrix.
///
/// # Shapes
/// `x`: `rows · columns` values. Returns `columns` sums.
pub fn column_sums(x: &[f32], rows: usize, columns: usize) -> Vec<f32> {
    debug_assert_eq!(x.len(), rows * columns);
    let whole = columns / GROUP * GROUP;
    let mut sums = cascade_columns(x, columns, 0..whole, |r| r, rows);
    sums.extend(row_sum_columns(x, columns, whole..columns, rows));
    // The result starts at 0 and the column's sum is added to it: a sum is never -0.
    for sum in &mut sums {
        *sum += 0.0;
    }
    sums
}

/// `row_sum` of each column in `cols`: four interleaved cascades (row `4g + j` into
/// cascade `j`), the last `rows mod 4` rows added to the first, then
/// `((a0 + a1) + a2) + a3`.
fn row_sum_columns(
    x: &[f32],
    width: usize,
    cols: Range<usize>,
    rows: usize,
) -> Vec<f32> {
    let groups = rows / 4;
    let mut acc: Vec<Vec<f32>> = (0..4)
        .map(|j| cascade_columns(x, width, cols.clone(), |g| 4 * g + j, groups))
        .collect();
    for r in groups * 4..rows {
        add_row(&mut acc[0], &x[r * width..][cols.clone()]);
    }
    let (first, rest) = acc.split_first_mut().expect("four accumulators");
    for other in rest.iter() {
        add_row(first, other);
    }
    acc.swap_remove(0)
}

/// The cascade of each column in `cols` over the rows `row(0), ..., row(n - 1)`: level 0
/// takes `step` rows, then moves into level 1, which moves into level 2 every `step` moves,
/// and so on (see `cascade_sum::cascade`); then `((l0 + l1) + l2) + l3`.
fn cascade_columns(
    x: &[f32],
    width: usize,
    cols: Range<usize>,
    row: impl Fn(usize) -> usize,
    n: usize,
) -> Vec<f32> {
    let values = |i: usize| &x[row(i) * width..][cols.clone()];
    let level_power = 4.max(ceil_log2(n) / 4);
    let step = 1usize << level_power;
    let mask = step - 1;
    let mut level: [Vec<f32>; 4] = std::array::from_fn(|_| vec![0.0f32; cols.len()]);
    let mut i = 0;
    while i + step <= n {
        for _ in 0..step {
            add_row(&mut level[0], values(i));
            i += 1;
        }
        for j in 1..4 {
            let (lower, upper) = level.split_at_mut(j);
            add_row(&mut upper[0], &lower[j - 1]);
            lower[j - 1].fill(0.0);
            if i & (mask << (j * level_power)) != 0 {
                break;
            }
        }
    }
    while i < n {
        add_row(&mut level[0], values(i));
        i += 1;
    }
    let [mut sums, l1, l2, l3] = level;
    for l in [l1, l2, l3] {
        add_row(&mut sums, &l);
    }
    sums
}

/// `sums[j] += row[j]` for every column.
#[inline]
fn add_row(sums: &mut [f32], row: &[f32]) {
    for (sum, &value) in sums.iter_mut().zip(row) {
        *sum += value;
    }
}

#[cfg(test)]
mod tests {
    use crate::{manual_seed, randn, set_num_threads};

    /// A matrix that lies in memory with a gap after each row takes the general walk (a copy
    /// into column order, each column alone); the same values without the gap take
    /// [`column_sums`](super::column_sums). The bits agree for every kind of column, for sums
    /// short of and past a cascade step, on one thread and split over four, and `-0` sums
    /// to `0`.
    #[test]
    fn same_bits_as_the_general_walk() {
        manual_seed(0);
        for threads in [1, 4] {
            set_num_threads(threads);
            for rows in [1, 3, 17, 100, 2048, 5000] {
                for columns in [8, 24, 32, 40, 96] {
                    let wide = randn(&[rows, columns + 5]) * 1000.0;
                    let gapped = wide.slice(1, ..columns);
                    let packed = gapped.contiguous();
                    // (One row is one run of memory either way: the plain walk of a vector.)
                    assert!(rows == 1 || gapped.array().as_slice().is_none());
                    assert!(packed.array().as_slice().is_some());
                    let bits = |t: &crate::Tensor| {
                        t.sum_dim(0, false)
                            .to_vec()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(
                        bits(&packed),
                        bits(&gapped),
                        "{rows} × {columns}, {threads}"
                    );
                }
            }
        }
        let negative_zeros = crate::Tensor::from_vec(vec![-0.0; 16], &[2, 8]);
        assert!(
            negative_zeros
                .sum_dim(0, false)
                .to_vec()
                .iter()
                .all(|v| v.to_bits() == 0)
        );
    }
}
