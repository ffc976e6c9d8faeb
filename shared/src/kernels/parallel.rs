//! Elementwise work spread over the rayon pool, as ATen's `parallel_for` spreads it: a
//! tensor of at least two grains is cut into halves, and the halves again, until each
//! piece holds less than two grains, and the pieces run on whichever threads are free.
//! Every element is computed by the same function whichever piece it falls in, so the
//! result is the same, bit for bit, on any number of threads; on one thread nothing is
//! cut.

use ndarray::{Dimension, NdProducer, Zip};
use rayon::prelude::*;

/// ATen's grain (`at::internal::GRAIN_SIZE`): the elements below which a loop or a sum
/// stays on one thread. The elementwise loops here, SiLU's and GELU's ranges and the sums
/// of [`super::cascade_sum`] all split by it.
pub(crate) const GRAIN: usize = 32768;

/// Whether `elements` are worth cutting into pieces for the pool's threads.
fn worth_splitting(elements: usize) -> bool {
    elements >= 2 * GRAIN && rayon::current_num_threads() > 1
}

/// `zip.for_each(f)`, the pieces of a large `zip` on the pool's threads. `f` is taken by
/// value (a closure of references and numbers is `Copy`), so that each piece's loop
/// inlines it, as `zip.for_each(f)` alone would.
///
/// # Shapes
/// Whatever `zip` holds (its producers have one shape).
pub(crate) fn for_each2<P1, P2, D, F>(zip: Zip<(P1, P2), D>, f: F)
where
    D: Dimension,
    P1: NdProducer<Dim = D> + Send,
    P2: NdProducer<Dim = D> + Send,
    F: Fn(P1::Item, P2::Item) + Sync + Copy,
{
    if worth_splitting(zip.size()) {
        let (first, second) = zip.split();
        rayon::join(|| for_each2(first, f), || for_each2(second, f));
    } else {
        zip.for_each(f);
    }
}

/// `zip.for_each(f)` for three producers, the pieces of a large `zip` on the pool's threads.
///
/// # Shapes
/// Whatever `zip` holds (its producers have one shape).
pub(crate) fn for_each3<P1, P2, P3, D, F>(zip: Zip<(P1, P2, P3), D>, f: F)
where
    D: Dimension,
    P1: NdProducer<Dim = D> + Send,
    P2: NdProducer<Dim = D> + Send,
    P3: NdProducer<Dim = D> + Send,
    F: Fn(P1::Item, P2::Item, P3::Item) + Sync + Copy,
{
    if worth_splitting(zip.size()) {
        let (first, second) = zip.split();
        rayon::join(|| for_each3(first, f), || for_each3(second, f));
    } else {
        zip.for_each(f);
    }
}

/// [`for_each3`] over producers of rows of `n` elements each: the pieces cut by the
/// elements they hold, not by their rows.
///
/// # Shapes
/// Whatever `zip` holds (its producers have one shape), each item a row of `n` elements.
pub(crate) fn for_each3_rows<P1, P2, P3, D, F>(
    zip: Zip<(P1, P2, P3), D>,
    n: usize,
    f: F,
) where
    D: Dimension,
    P1: NdProducer<Dim = D> + Send,
    P2: NdProducer<Dim = D> + Send,
    P3: NdProducer<Dim = D> + Send,
    F: Fn(P1::Item, P2::Item, P3::Item) + Sync + Copy,
{
    if worth_splitting(zip.size().saturating_mul(n)) && zip.size() > 1 {
        let (first, second) = zip.split();
        rayon::join(
            || for_each3_rows(first, n, f),
            || for_each3_rows(second, n, f),
        );
    } else {
        zip.for_each(f);
    }
}

/// `rows(x, out)` on blocks of whole rows of length `n`, the blocks of a large `x` on the
/// pool's threads: one block per thread, but none of less than a grain (and at least one
/// row).
///
/// # Shapes
/// `x`, `out`: `[rows · n]`, row after row; `n ≥ 1`.
pub(crate) fn by_rows(
    x: &[f32],
    out: &mut [f32],
    n: usize,
    rows: impl Fn(&[f32], &mut [f32]) + Sync,
) {
    if !worth_splitting(x.len()) {
        return rows(x, out);
    }
    let rows_per_thread = (x.len() / n).div_ceil(rayon::current_num_threads());
    let block = GRAIN.div_ceil(n).max(rows_per_thread) * n;
    x.par_chunks(block)
        .zip(out.par_chunks_mut(block))
        .for_each(|(x, out)| rows(x, out));
}

/// `out.assign(&x)`, a large copy cut along its first dim into pieces for the pool's
/// threads; each piece is copied by `assign`, a row at a time.
///
/// # Shapes
/// `out`, `x`: the same shape.
pub(crate) fn assign<E: Clone + Send + Sync>(
    mut out: ndarray::ArrayViewMutD<'_, E>,
    x: ndarray::ArrayViewD<'_, E>,
) {
    let outer = out.shape().first().copied().unwrap_or(1);
    if !worth_splitting(out.len()) || outer < 2 {
        return out.assign(&x);
    }
    let half = ndarray::Axis(0);
    let (out_first, out_second) = out.split_at(half, outer / 2);
    let (x_first, x_second) = x.split_at(half, outer / 2);
    rayon::join(
        || assign(out_first, x_first),
        || assign(out_second, x_second),
    );
}

/// Runs `f` inside a pool of `threads` threads (for the kernels' tests).
#[cfg(test)]
pub(crate) fn on(threads: usize, f: impl FnOnce() + Send) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
    pool.expect("a pool").install(f);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ArrayD, IxDyn};

    #[test]
    fn every_element_once_on_any_number_of_threads() {
        // Odd sizes, so that the halves are uneven; a transposed view, so that the pieces
        // are not runs of memory.
        let a = ArrayD::from_shape_fn(IxDyn(&[3, 301, 257]), |i| {
            (i[0] * 7 + i[1] * 3 + i[2]) as f32
        });
        let b = Array2::from_shape_fn((257, 301), |(i, j)| (i * 5 + j) as f32);
        for threads in [1, 2, 4] {
            on(threads, || {
                let mut out = ArrayD::<f32>::zeros(IxDyn(&[3, 301, 257]));
                let b = b
                    .t()
                    .broadcast(IxDyn(&[3, 301, 257]))
                    .expect("broadcasts")
                    .to_owned();
                let zip = Zip::from(out.view_mut()).and(a.view()).and(b.view());
                for_each3(zip, |o: &mut f32, &x: &f32, &y: &f32| *o = x * 2.0 + y);
                let expected =
                    Zip::from(&a).and(&b).map_collect(|&x, &y| x * 2.0 + y);
                assert_eq!(out, expected, "{threads} threads");
                let mut copy = ArrayD::<f32>::zeros(IxDyn(&[3, 301, 257]));
                for_each2(
                    Zip::from(copy.view_mut()).and(a.view()),
                    &|o: &mut f32, &x: &f32| *o += x,
                );
                assert_eq!(copy, a, "{threads} threads");
            });
        }
    }

    #[test]
    fn rows_are_never_cut() {
        let n = 33;
        let x: Vec<f32> = (0..n * 4001).map(|i| (i % 97) as f32).collect();
        let sums = |x: &[f32], out: &mut [f32]| {
            assert_eq!(x.len() % n, 0, "a block of whole rows");
            for (row, out) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
                let total: f32 = row.iter().sum();
                out.fill(total);
            }
        };
        let mut expected = vec![0.0; x.len()];
        sums(&x, &mut expected);
        for threads in [1, 2, 3] {
            on(threads, || {
                let mut out = vec![0.0; x.len()];
                by_rows(&x, &mut out, n, sums);
                assert_eq!(out, expected, "{threads} threads");
            });
        }
    }

    #[test]
    fn a_copy_has_every_value_in_its_place_on_any_number_of_threads() {
        // Views with their first two dims swapped (merging the heads copies a view with two
        // dims swapped): an odd first dim of 5 (uneven halves), and a first dim of 1
        // (nothing to cut along).
        for shape in [[7, 5, 3001], [40, 1, 3001]] {
            let a = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
                (i[0] * 7 + i[1] * 3 + i[2]) as f32
            });
            let mut swapped = a.view();
            swapped.swap_axes(0, 1);
            let expected = swapped.to_owned();
            for threads in [1, 2, 4] {
                on(threads, || {
                    let mut copy = ArrayD::<f32>::zeros(swapped.raw_dim());
                    assign(copy.view_mut(), swapped.view());
                    assert_eq!(copy, expected, "{shape:?}, {threads} threads");
                });
            }
        }
    }
}
