//! The loops that multiply matrices, each adding up its products in the order PyTorch's CPU
//! back-end does for that kind of product.
//!
//! Floating-point addition is not associative: `(a + b) + c` and `a + (b + c)` can differ
//! in the last bit, and a last bit can change the 4th printed decimal when a value sits
//! near a rounding boundary. So, to print the articles' digits, the order of the additions
//! must follow PyTorch's, which depends on what kind of product it is:
//!
//! - A batched product of small matrices (`k·m·n < 400`, e.g. `Q·Kᵀ` per head in the
//!   tutorials) runs PyTorch's own loop: for each output, `acc += a·b` over `k` in order,
//!   each product rounded, then added (no fused multiply-add): `Order::Plain`.
//! - A 2-D product (and a batched one of larger matrices, one matrix at a time) goes to
//!   MKL's `sgemm`, which (measured on PyTorch 2.13.0 for `k ≤ 256`) accumulates each output
//!   over `k` in order with a fused multiply-add, `acc = fma(a, b, acc)`. See
//!   [`fused_sum`](super::dot_orders::fused_sum).
//! - Exceptions measured in MKL:
//!   - when the right matrix is a transposed view (as in `x·Wᵀ` of `nn.Linear`) with two or
//!     three columns, and the result has at most 30 elements, each output is a dot product
//!     whose (at most 16) products are added pairwise, as 16 vector lanes are: `p0+p8`,
//!     `p1+p9`, ..., then halves again until one value is left. See [`lane_sum`]. (Measured:
//!     two columns take lanes up to 15 rows, three up to 10; more rows, the fused chain.)
//!   - a right matrix of one column is a vector to MKL: the product is `sgemv`'s, below;
//!   - a matrix times a vector goes to MKL's `sgemv`, and so does a product with one row
//!     (`q·Kᵀ`, `x·W`). When each output is a dot product of a contiguous row with the
//!     vector (`W·x`, `q·Kᵀ`), the outputs are taken in blocks of four, each added in 16
//!     lanes, and the last one to three outputs by a tail loop of their own. See
//!     [`row_dot_sum`]. When the matrix's columns are contiguous instead (`x·W`, `Wᵀ·x`),
//!     MKL sweeps over the columns, eight at a time, for blocks of 16 outputs, and the
//!     outputs after the last block are plain fused chains. See [`column_sweep_sum`];
//!   - a dot product of two contiguous vectors (`torch.dot`, `matmul` of two 1-D tensors)
//!     goes to MKL's `sdot`: four accumulators of 16 lanes, reduced as vector instructions
//!     reduce. See [`sdot_sum`](super::dot_orders::sdot_sum). Strided vectors take MKL's scalar path instead: see
//!     [`strided_sdot_sum`](super::dot_orders::strided_sdot_sum).
//!
//! Each order is written for one output in [`dot_orders`](super::dot_orders).
//!
//! Larger products (`k > 256` or more than [`EXACT_LIMIT`] multiply-adds) use the packed
//! GEMM of [`gemm`](super::gemm) instead, on every thread of the current rayon pool (see
//! [`blocked_into`]); there the order differs from MKL's anyway, and only the speed matters.
//!
//! Measured against PyTorch 2.13.0 with MKL on an Intel AVX-512 processor
//! (`tests/fixtures/ops_fixtures.json`, `edge_fixtures.json`, `shared/tests/kernels.rs`).

use ndarray::{ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

use super::dot_orders::{column_sweep_sum, lane_sum, row_dot_sum};
use super::gemm::{Isa, gemm_into};

/// Products up to this many multiply-adds (`m·n·k`) use the order-exact loops.
pub const EXACT_LIMIT: usize = 1 << 18;

/// Batched products of matrices with `k·m·n` below this use PyTorch's own loop.
pub const SMALL_BMM_LIMIT: usize = 400;

/// How the additions of one output element are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `acc += a·b` in order of `k`, product rounded first (PyTorch's small `bmm` loop).
    Plain,
    /// `acc = fma(a, b, acc)` in order of `k` (MKL's `sgemm`).
    Fused,
    /// Products added pairwise as vector lanes are (MKL, narrow transposed right matrix).
    Lanes,
    /// Dot products of contiguous rows, in blocks of four outputs (MKL's `sgemv`, `W·x`).
    RowDots,
    /// Sweeps over contiguous columns, in blocks of 16 outputs (MKL's `sgemv`, `x·W`).
    ColumnSweeps,
}

/// `c = a · b` for one pair of matrices, with the additions in `order`.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn matmul_into(
    order: Order,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    // A one-row product (or a matrix times a vector) whose rows lie contiguous in memory
    // goes to the kernel that takes four outputs per pass over the vector, on every thread;
    // each output keeps its own order, so the bits are those of the loop below.
    if order == Order::RowDots
        && super::row_dots::row_dots_of_views(a, b, c.view_mut())
    {
        return;
    }
    // So does one row times a matrix of contiguous rows, 16 outputs per pass down it.
    if order == Order::ColumnSweeps
        && super::column_sweeps::column_sweeps_of_views(a, b, c.view_mut())
    {
        return;
    }
    let (m, k) = a.dim();
    let n = b.dim().1;
    // A matrix–vector product costs one multiply-add per matrix entry in any order, so it
    // keeps MKL's order at every size.
    let vector_like = matches!(order, Order::RowDots | Order::ColumnSweeps);
    if !vector_like
        && (k > 256 || m.saturating_mul(n).saturating_mul(k) > EXACT_LIMIT)
    {
        blocked_into(a, b, c);
        return;
    }
    // The packed GEMM adds each output's products as `Order::Fused` does, one fused
    // multiply-add per step of `k` from zero, so where it has a micro-kernel it gives a
    // small fused product's bits too, without the loop's copies and with the sums in
    // registers (a training step takes thousands of 32 × 16 × 32 products per head).
    if order == Order::Fused && Isa::detect() != Isa::Portable {
        gemm_into(a, b, c);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { exact_products_fma(order, a, b, c) };
        return;
    }
    exact_products(order, a, b, c);
}

/// `c[i] = a[i] · b` for each row `i` of `a`, each row multiplied as a one-row product of
/// its own would be in `order` (PyTorch's order for `[1, k] · b`): several query heads
/// that share one cached head, as `repeat_kv` would have given each its own copy. Along a
/// row the sweeps' and dots' outputs depend only on their column, so those kernels take
/// the rows together and read `b` once; other orders go one row at a time.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn rows_alone_into(
    order: Order,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    if matches!(order, Order::RowDots | Order::ColumnSweeps) && b.dim().1 > 1 {
        matmul_into(order, a, b, c);
        return;
    }
    for (a, c) in a.outer_iter().zip(c.outer_iter_mut()) {
        matmul_into(order, a.insert_axis(Axis(0)), b, c.insert_axis(Axis(0)));
    }
}

/// [`exact_products`] compiled with the processor's 8-lane vectors and fused multiply-add
/// instruction. Without them, `f32::mul_add` is a call to the C library's `fmaf` (x86-64's
/// baseline has no FMA), correctly rounded too, so both give the same bits, but several
/// times slower.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn exact_products_fma(
    order: Order,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    c: ArrayViewMut2<f32>,
) {
    exact_products(order, a, b, c);
}

/// The loop of [`matmul_into`] for the products whose order of additions is PyTorch's.
#[inline(always)]
fn exact_products(
    order: Order,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    let (m, k) = a.dim();
    let n = b.dim().1;
    let mut column = vec![0.0f32; k];
    if let Order::Plain | Order::Fused = order {
        // Each output is its own chain over `k`, so the outputs of a column can advance
        // side by side, as many per instruction as a vector holds, each in its own order.
        // `a` is laid out by columns for that: `columns[e·m + i]` is `a[i, e]`.
        let mut columns = vec![0.0f32; m * k];
        for ((i, e), &x) in a.indexed_iter() {
            columns[e * m + i] = x;
        }
        let mut sums = vec![0.0f32; m];
        for j in 0..n {
            copy_into(&mut column, b.column(j));
            sums.fill(0.0);
            for (e, &y) in column.iter().enumerate() {
                let a_e = &columns[e * m..(e + 1) * m];
                if order == Order::Fused {
                    for (sum, &x) in sums.iter_mut().zip(a_e) {
                        *sum = x.mul_add(y, *sum);
                    }
                } else {
                    for (sum, &x) in sums.iter_mut().zip(a_e) {
                        *sum += x * y;
                    }
                }
            }
            c.column_mut(j).assign(&ndarray::ArrayView1::from(&sums));
        }
        return;
    }
    // Each row of `a` once in a contiguous buffer, read once per column of `b`.
    let mut rows = vec![0.0f32; m * k];
    for (buffer, row) in rows.chunks_exact_mut(k.max(1)).zip(a.rows()) {
        copy_into(buffer, row);
    }
    for j in 0..n {
        // A column of `Wᵀ` (a row of `W`) is read where it is; any other is copied first.
        let b_j = b.column(j);
        let column: &[f32] = match b_j.as_slice() {
            Some(contiguous) => contiguous,
            None => {
                copy_into(&mut column, b_j);
                &column
            }
        };
        for i in 0..m {
            let row = &rows[i * k..(i + 1) * k];
            // The `sgemv` orders depend on where the output sits among the outputs: down
            // the column of a matrix times a vector, along the row of a row times a matrix.
            let (index, count) = if n == 1 { (i, m) } else { (j, n) };
            c[[i, j]] = match order {
                Order::Lanes => {
                    lane_sum(row.iter().copied().zip(column.iter().copied()))
                }
                Order::RowDots => row_dot_sum(row, column, index, count),
                Order::ColumnSweeps => column_sweep_sum(row, column, index, count),
                Order::Plain | Order::Fused => {
                    unreachable!("summed side by side above")
                }
            };
        }
    }
}

/// Copies a (possibly strided) row or column into a contiguous buffer of the same length.
fn copy_into(buffer: &mut [f32], values: ndarray::ArrayView1<f32>) {
    // A contiguous row (a weight row of `x·Wᵀ`) is one memory copy.
    if let Some(slice) = values.as_slice() {
        buffer.copy_from_slice(slice);
        return;
    }
    for (slot, &x) in buffer.iter_mut().zip(values) {
        *slot = x;
    }
}

/// Rows of `a` per thread below which a product is not worth splitting: 64 rows of a
/// `k = 768` product are about 0.1 ms of work on one core, far above what a thread costs.
const MIN_ROWS_PER_THREAD: usize = 64;

/// Columns of `b` per thread below which a product is not worth splitting by columns.
const MIN_COLUMNS_PER_THREAD: usize = 64;

/// The widest strip of `b` a micro-kernel takes (a multiple of every strip width): each
/// thread's columns are a whole number of strips.
const STRIP: usize = 32;

/// `c = a · b` with the packed GEMM of [`gemm`](super::gemm), split between the threads of
/// the current rayon pool (one thread outside a pool of several).
///
/// Each thread packs and multiplies its own part. A product with more columns than rows
/// (a prompt of a few hundred tokens times a weight, `x·Wᵀ`) is split by columns, so that
/// each thread packs only its share of `b`, which for a short prompt costs as much as the
/// multiplication; a product with more rows (training's batches) is split by rows, as is
/// one whose `b` is kept packed (its packing is shared, see
/// [`Linear::pack_weight`](crate::nn::Linear::pack_weight)). Splitting changes which
/// numbers are packed together, not the order in which an output adds its products (a
/// fused chain in order of `k`), so the result has the same bits on any number of threads.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn blocked_into(
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    let (m, n) = (a.dim().0, b.dim().1);
    let pool = rayon::current_num_threads();
    let by_columns = n > m && !super::gemm::is_kept(b);
    let threads = if by_columns {
        pool.min(n / MIN_COLUMNS_PER_THREAD)
    } else {
        pool.min(m / MIN_ROWS_PER_THREAD)
    }
    .max(1);
    if threads == 1 {
        gemm_into(a, b, c);
    } else if by_columns {
        let columns = n.div_ceil(threads).next_multiple_of(STRIP);
        let parts: Vec<_> = b
            .axis_chunks_iter(Axis(1), columns)
            .zip(c.axis_chunks_iter_mut(Axis(1), columns))
            .collect();
        parts.into_par_iter().for_each(|(b, c)| gemm_into(a, b, c));
    } else {
        let rows = m.div_ceil(threads);
        let parts: Vec<_> = a
            .axis_chunks_iter(Axis(0), rows)
            .zip(c.axis_chunks_iter_mut(Axis(0), rows))
            .collect();
        parts.into_par_iter().for_each(|(a, c)| gemm_into(a, b, c));
    }
}

/// Which order PyTorch uses for a 2-D product `a · b` (see the module docs); `vector` says
/// that `b` is a vector (`torch.mv`).
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`.
pub fn mkl_order(a: ArrayView2<f32>, b: ArrayView2<f32>, vector: bool) -> Order {
    let (m, k) = a.dim();
    let n = b.dim().1;
    // A transposed view `Wᵀ` of a row-major `W` steps 1 along `k` (down a column).
    let transposed = k > 1 && b.strides()[0] == 1;
    let rows_contiguous = k <= 1 || a.strides()[1] == 1;
    if m == 1 && n == 1 {
        // One output: MKL's tail dot (one block of no outputs, then this one).
        Order::RowDots
    } else if vector {
        if rows_contiguous {
            Order::RowDots
        } else {
            Order::ColumnSweeps
        }
    } else if m == 1 {
        if transposed {
            Order::RowDots
        } else {
            Order::ColumnSweeps
        }
    } else if n == 1 && rows_contiguous {
        // A matrix times a one-column matrix is a matrix times a vector to MKL (`sgemv`).
        Order::RowDots
    } else if transposed && n <= 3 && k <= 16 && m * n <= 30 {
        Order::Lanes
    } else {
        Order::Fused
    }
}

#[cfg(test)]
mod tests {
    use super::super::row_dots::tests::{bits, values};
    use super::*;
    use ndarray::Array2;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn sgemv_products_have_the_loops_bits_on_any_number_of_threads(
            k in 0usize..=100,
            outputs in 1usize..=40,
            threads in 1usize..=3,
            seed in any::<u64>(),
        ) {
            let w = Array2::from_shape_vec((outputs, k), values(seed, outputs * k)).unwrap();
            let x = Array2::from_shape_vec((1, k), values(!seed, k)).unwrap();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // `x·Wᵀ` (one row, the outputs along it) and `W·x` (one column, down it).
            let products = [(x.view(), w.t()), (w.view(), x.t())];
            for order in [Order::RowDots, Order::ColumnSweeps] {
                for (a, b) in products {
                    let shape = (a.dim().0, b.dim().1);
                    let mut expected = Array2::from_elem(shape, f32::NAN);
                    exact_products(order, a, b, expected.view_mut());
                    let mut got = Array2::from_elem(shape, f32::NAN);
                    pool.install(|| matmul_into(order, a, b, got.view_mut()));
                    prop_assert_eq!(
                        bits(got.as_slice().unwrap()),
                        bits(expected.as_slice().unwrap()),
                        "{:?}, {:?}", order, shape
                    );
                }
            }
        }
    }

    #[test]
    fn a_blocked_product_has_the_same_bits_on_any_number_of_threads() {
        // Split by rows (more rows than columns), then by columns.
        for (m, k, n) in [(301, 300, 37), (37, 300, 301)] {
            blocked_product_on_threads(m, k, n);
        }
    }

    fn blocked_product_on_threads(m: usize, k: usize, n: usize) {
        let a = ndarray::Array2::from_shape_fn((m, k), |(i, j)| {
            ((i * 7 + j * 3) % 11) as f32 / 7.0
        });
        let b = ndarray::Array2::from_shape_fn((k, n), |(i, j)| {
            ((i * 5 + j) % 13) as f32 / 9.0 - 0.6
        });
        let mut one = ndarray::Array2::zeros((m, n));
        gemm_into(a.view(), b.view(), one.view_mut());
        for threads in [2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut many = ndarray::Array2::zeros((m, n));
            pool.install(|| blocked_into(a.view(), b.view(), many.view_mut()));
            let bits = |x: &ndarray::Array2<f32>| {
                x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            assert_eq!(bits(&one), bits(&many), "{m}x{k}x{n} on {threads} threads");
        }
    }
}
