//! Which elements PyTorch's elementwise loop (`TensorIterator`'s inner loop) takes a whole
//! vector at a time: the one place where that matters to a result is which of two equal
//! zeros `maximum` and `minimum` return.

use ndarray::IxDyn;

use crate::tensor::Tensor;

/// How many elements PyTorch's elementwise loop walks in one go, vector by vector, for
/// `a` and `b` broadcast to `shape`; `None` where it walks them one at a time.
///
/// PyTorch's `TensorIterator` merges the innermost dims that follow each other in memory
/// for every operand (a broadcast operand steps by 0 there) and runs its inner loop over
/// them. The loop is vectorised when each operand steps by one element or by 0 (a value
/// repeated), not both by 0: then it takes whole vectors (16 floats with AVX-512, 8 with
/// AVX2) and the last `run % lanes` elements one at a time. Measured with PyTorch 2.13.0
/// on AVX-512 (`scripts/make_room_fixtures.py`): `maximum(full([17], -0.), zeros([17]))`
/// is sixteen `0.` and a `-0.`; a transposed operand gives `-0.` everywhere. Results of
/// 32768 elements or more are split between threads, each starting its own vectors: that
/// split is not followed.
pub(crate) fn vectorised_run(
    a: &Tensor,
    b: &Tensor,
    shape: &[usize],
) -> Option<usize> {
    if shape.contains(&0) {
        return None;
    }
    let strides = |t: &Tensor| -> Vec<isize> {
        t.stored
            .broadcast(IxDyn(shape))
            .expect("broadcast checked")
            .strides()
            .to_vec()
    };
    let (sa, sb) = (strides(a), strides(b));
    // Dims of size 1 step nowhere: they merge with anything.
    let dims: Vec<(usize, isize, isize)> = (0..shape.len())
        .filter(|&d| shape[d] != 1)
        .map(|d| (shape[d], sa[d], sb[d]))
        .collect();
    let Some(&(n, a0, b0)) = dims.last() else {
        return Some(1);
    };
    let steps = |s: isize| s == 0 || s == 1;
    if !steps(a0) || !steps(b0) || (a0 == 0 && b0 == 0) {
        return None;
    }
    let (mut run, mut next_a, mut next_b) = (n, a0 * n as isize, b0 * n as isize);
    for &(n, sa, sb) in dims.iter().rev().skip(1) {
        if sa != next_a || sb != next_b {
            break;
        }
        run *= n;
        (next_a, next_b) = (sa * n as isize, sb * n as isize);
    }
    Some(run)
}
