//! A batched product, `[..batch, m, k] · [..batch, k, n]`, its matrices shared between the
//! threads of the current rayon pool.
//!
//! The matrices of a batch are independent products: each thread takes a run of whole
//! matrices and multiplies each as it would alone, so every output adds its products in
//! the same order, and the result has the same bits on any number of threads. (PyTorch's
//! `bmm` does the same: MKL's batched GEMM hands whole matrices to its threads.)
//!
//! A matrix of the batch is found from its number in the batch: the batch dims are merged
//! into one where memory allows (a contiguous `[64, 2, ..]` batch is 128 matrices one stride
//! apart), two batch dims that do not merge (the heads of a permuted view) are indexed as
//! such, and only other batches pay for the general multi-index.

use ndarray::{
    ArrayView2, ArrayView3, ArrayView4, ArrayViewD, ArrayViewMut2, ArrayViewMutD,
};
use ndarray::{Axis, Ix2, Ix3, Ix4};
use rayon::prelude::*;

/// Multiply-adds a thread should have before a batch is split: about ten microseconds of
/// the packed GEMM, far more than handing the work to another thread costs.
const MIN_WORK_PER_THREAD: usize = 1 << 16;

/// `c[i] = product(a[i], b[i])` for every matrix `i` of the batch, the matrices split
/// between the threads of the current rayon pool when there is enough work.
///
/// # Shapes
/// `a`: `[..batch, m, k]`, `b`: `[..batch, k, n]`, `c`: `[..batch, m, n]` (overwritten,
/// row-major), the same batch dims (already broadcast).
pub fn batched_into(
    a: ArrayViewD<f32>,
    b: ArrayViewD<f32>,
    mut c: ArrayViewMutD<f32>,
    product: impl Fn(ArrayView2<f32>, ArrayView2<f32>, ArrayViewMut2<f32>) + Sync,
) {
    let dims = a.ndim();
    let (m, k, n) = (
        a.shape()[dims - 2],
        a.shape()[dims - 1],
        b.shape()[dims - 1],
    );
    let matrices: usize = a.shape()[..dims - 2].iter().product();
    if matrices == 0 || m * n == 0 {
        return;
    }
    let (a, b) = (Matrices::new(a), Matrices::new(b));
    let c = c.as_slice_mut().expect("a fresh row-major product");
    let run = |first: usize, c: &mut [f32]| {
        for (i, c) in c.chunks_exact_mut(m * n).enumerate() {
            let c = ArrayViewMut2::from_shape((m, n), c).expect("m × n outputs");
            product(a.at(first + i), b.at(first + i), c);
        }
    };
    let work = matrices.saturating_mul(m * n).saturating_mul(k);
    let threads = rayon::current_num_threads()
        .min(work / MIN_WORK_PER_THREAD)
        .min(matrices)
        .max(1);
    if threads == 1 {
        return run(0, c);
    }
    let per_thread = matrices.div_ceil(threads);
    c.par_chunks_mut(per_thread * m * n)
        .enumerate()
        .for_each(|(part, c)| run(part * per_thread, c));
}

/// The matrices of a batched operand, found by their number in the batch.
enum Matrices<'a> {
    /// The batch dims merged into one.
    Merged(ArrayView3<'a, f32>),
    /// Two batch dims that do not merge.
    Two(ArrayView4<'a, f32>),
    /// Any other batch.
    General(ArrayViewD<'a, f32>),
}

impl<'a> Matrices<'a> {
    /// # Shapes
    /// `view`: `[..batch, rows, cols]`, at least one batch dim.
    fn new(view: ArrayViewD<'a, f32>) -> Matrices<'a> {
        let batch_dims = view.ndim() - 2;
        let mut merged = view.clone();
        // Each slower batch dim into the last one; `merge_axes` leaves it of size 1.
        if (0..batch_dims - 1)
            .rev()
            .all(|d| merged.merge_axes(Axis(d), Axis(batch_dims - 1)))
        {
            while merged.ndim() > 3 {
                merged = merged.index_axis_move(Axis(0), 0);
            }
            return Matrices::Merged(
                merged.into_dimensionality::<Ix3>().expect("three dims"),
            );
        }
        match view.clone().into_dimensionality::<Ix4>() {
            Ok(four) => Matrices::Two(four),
            Err(_) => Matrices::General(view),
        }
    }

    /// Matrix `i` of the batch, in row-major order of the batch dims.
    fn at(&self, i: usize) -> ArrayView2<'a, f32> {
        match self {
            Matrices::Merged(three) => three.index_axis_move(Axis(0), i),
            Matrices::Two(four) => {
                let inner = four.dim().1;
                four.index_axis_move(Axis(0), i / inner)
                    .index_axis_move(Axis(0), i % inner)
            }
            Matrices::General(view) => {
                let mut rest = i;
                let mut matrix = view.clone();
                // The batch index, last dim fastest, taken from the slowest dim down.
                for d in (0..view.ndim() - 2).rev() {
                    let size = view.shape()[d];
                    matrix = matrix.index_axis_move(Axis(d), rest % size);
                    rest /= size;
                }
                matrix.into_dimensionality::<Ix2>().expect("two dims left")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array, ArrayD, Dimension, IxDyn};

    use super::*;

    /// Each matrix by itself, one after the other, found by its multi-index.
    fn reference(a: &ArrayD<f32>, b: &ArrayD<f32>, c: &mut ArrayD<f32>) {
        let batch = &a.shape()[..a.ndim() - 2];
        for index in ndarray::indices(IxDyn(batch)) {
            let (mut a2, mut b2, mut c2) = (a.view(), b.view(), c.view_mut());
            for &i in index.slice() {
                a2 = a2.index_axis_move(Axis(0), i);
                b2 = b2.index_axis_move(Axis(0), i);
                c2 = c2.index_axis_move(Axis(0), i);
            }
            let two = |v: ArrayViewD<f32>| {
                v.into_dimensionality::<Ix2>().unwrap().to_owned()
            };
            let c2 = c2.into_dimensionality::<Ix2>().unwrap();
            plain_product(two(a2).view(), two(b2).view(), c2);
        }
    }

    /// A plain fused chain per output, in order of `k`.
    fn plain_product(
        a: ArrayView2<f32>,
        b: ArrayView2<f32>,
        mut c: ArrayViewMut2<f32>,
    ) {
        for ((i, j), out) in c.indexed_iter_mut() {
            *out =
                (0..a.dim().1).fold(0.0, |acc, p| a[[i, p]].mul_add(b[[p, j]], acc));
        }
    }

    fn values(shape: &[usize], seed: u32) -> ArrayD<f32> {
        let n: usize = shape.iter().product();
        let v = (0..n)
            .map(|i| {
                ((i as u32).wrapping_mul(2654435761) ^ seed) as f32 / u32::MAX as f32
                    - 0.5
            })
            .collect();
        Array::from_shape_vec(IxDyn(shape), v).unwrap()
    }

    /// Contiguous, transposed, permuted (heads) and broadcast batches of two and three
    /// batch dims, on one and on four threads: the bits of the matrices taken one by one.
    #[test]
    fn same_bits_as_one_matrix_at_a_time() {
        let a = values(&[8, 3, 32, 16], 1);
        let b_t = values(&[8, 3, 32, 16], 2);
        let b_t = b_t.view().permuted_axes(IxDyn(&[0, 1, 3, 2]));
        let heads = values(&[8, 32, 3, 16], 3);
        let heads = heads.view().permuted_axes(IxDyn(&[0, 2, 1, 3]));
        let one_row = values(&[1, 3, 32, 16], 4);
        let broadcast = one_row.broadcast(IxDyn(&[8, 3, 32, 16])).unwrap();
        let deep_a = values(&[2, 1, 3, 32, 16], 5);
        let deep_a = deep_a.broadcast(IxDyn(&[2, 4, 3, 32, 16])).unwrap();
        let deep_b = values(&[2, 4, 3, 16, 32], 6);
        let cases = [
            (a.view(), b_t.view()),
            (heads.view(), b_t.view()),
            (broadcast.view(), b_t.view()),
            (deep_a.view(), deep_b.view()),
        ];
        for (a, b) in cases {
            let mut shape = a.shape().to_vec();
            shape[a.ndim() - 1] = b.shape()[b.ndim() - 1];
            let mut expected = ArrayD::zeros(IxDyn(&shape));
            reference(&a.to_owned(), &b.to_owned(), &mut expected);
            for threads in [1, 4] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut got = ArrayD::from_elem(IxDyn(&shape), f32::NAN);
                pool.install(|| {
                    batched_into(a.view(), b.view(), got.view_mut(), plain_product)
                });
                let bits = |x: &ArrayD<f32>| {
                    x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                assert_eq!(
                    bits(&got),
                    bits(&expected),
                    "{shape:?}, {threads} threads"
                );
            }
        }
    }
}
