//! Tolerances for tests: whether two tensors hold the same numbers up to float32 rounding,
//! and an assertion that says where they differ.
//!
//! Two computations of the same formula in a different order (a loop and a matrix
//! product, a tiled softmax and a plain one) agree to a few roundings, not bit for bit, so
//! a test compares them with PyTorch's `allclose` rule, `|got - want| <= atol + rtol·|want|`,
//! rather than with `==`. Unlike `allclose`, the shapes must be equal: in a test, a shape
//! that merely broadcasts is a bug.
//!
//! When both tensors are matrices of weights, the failure message also draws them as
//! heatmaps side by side ([`crate::viz`]), so a mask on the wrong side of the diagonal or a
//! softmax over the wrong dim shows at a glance.

use crate::tensor::Tensor;
use crate::viz;

/// Where `got` and `want` differ beyond the tolerance: `None` if they are close, else a
/// message naming the shapes, or the first index that differs and both values there.
///
/// # Shapes
/// `got`, `want`: any shapes (different shapes are never close).
pub fn difference(
    got: &Tensor,
    want: &Tensor,
    rtol: f64,
    atol: f64,
) -> Option<String> {
    if got.sizes() != want.sizes() {
        return Some(format!(
            "shapes differ: got {:?}, want {:?}",
            got.sizes(),
            want.sizes()
        ));
    }
    let mut index = vec![0; got.dim()];
    for (g, w) in got.to_vec().into_iter().zip(want.to_vec()) {
        if !Tensor::scalar(g).allclose(&Tensor::scalar(w), rtol, atol, false) {
            return Some(format!(
                "first difference at index {index:?}: got {g:e}, want {w:e} \
                 (|got - want| = {:e} > atol {atol:e} + rtol {rtol:e} * |want|)",
                (g - w).abs()
            ));
        }
        // The next row-major index.
        for (i, n) in index.iter_mut().zip(got.sizes()).rev() {
            *i += 1;
            if *i < *n {
                break;
            }
            *i = 0;
        }
    }
    None
}

/// Whether `got` and `want` have the same shape and every pair of values satisfies
/// `|got - want| <= atol + rtol·|want|` (equal infinities agree, NaN never does).
///
/// # Shapes
/// `got`, `want`: any shapes (different shapes are never close).
pub fn close(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> bool {
    difference(got, want, rtol, atol).is_none()
}

/// Panics unless [`close`]`(got, want, rtol, atol)`, with a message that names the first
/// index where they differ and both values, then prints both tensors, and draws them side
/// by side when both are matrices of weights ([`weights_side_by_side`]).
///
/// # Shapes
/// `got`, `want`: the same shape.
#[track_caller]
pub fn assert_close(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) {
    if let Some(difference) = difference(got, want, rtol, atol) {
        let pictures = weights_side_by_side(want, got)
            .map(|p| format!("\n{p}"))
            .unwrap_or_default();
        panic!(
            "tensors are not close: {difference}\ngot  {got}\nwant {want}{pictures}"
        );
    }
}

/// The expected and the actual weights as heatmaps side by side, titled `want` and `got`,
/// rows and columns labelled by index; `None` unless both are 2-D, of the same shape, and
/// every value is a weight (between 0 and 1).
///
/// # Shapes
/// `want`, `got`: `[queries, keys]`.
pub fn weights_side_by_side(want: &Tensor, got: &Tensor) -> Option<String> {
    if want.sizes() != got.sizes() {
        return None;
    }
    let want = viz::heatmap_indexed(want).ok()?.title("want");
    let got = viz::heatmap_indexed(got).ok()?.title("got");
    (want.is_weights() && got.is_weights()).then(|| viz::side_by_side(&want, &got))
}

/// Where `got` and `want` differ bit for bit: `None` if they hold the same float32 values
/// in the same shape, else a message naming the shapes, or the first index that differs, both
/// values and how many float32 steps apart they are ([`ulps`]). Two computations that are
/// meant to be the same sums in the same order must agree this way.
///
/// # Shapes
/// `got`, `want`: any shapes (different shapes always differ).
pub fn bits_difference(got: &Tensor, want: &Tensor) -> Option<String> {
    if got.sizes() != want.sizes() {
        return Some(format!(
            "shapes differ: got {:?}, want {:?}",
            got.sizes(),
            want.sizes()
        ));
    }
    let (got, want) = (got.to_vec(), want.to_vec());
    let differing = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    let (i, (g, w)) = got
        .iter()
        .zip(&want)
        .enumerate()
        .find(|(_, (g, w))| g.to_bits() != w.to_bits())?;
    Some(format!(
        "{differing} of {} values differ; the first at flat index {i}: got {g:e}, want {w:e} \
         ({} ulps apart)",
        got.len(),
        ulps(*g, *w)
    ))
}

/// Whether `a` and `b` hold the same float32 values, bit for bit, in the same shape.
///
/// # Shapes
/// `a`, `b`: any shapes.
pub fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    bits_difference(a, b).is_none()
}

/// Panics unless `got` and `want` are the same bit for bit, with [`bits_difference`]'s
/// message after `what`.
///
/// # Shapes
/// `got`, `want`: the same shape.
#[track_caller]
pub fn assert_same_bits(got: &Tensor, want: &Tensor, what: impl std::fmt::Display) {
    if let Some(difference) = bits_difference(got, want) {
        panic!("{what}: not the same bits: {difference}");
    }
}

/// `max |a − b|` over all elements (0 for two empty tensors).
///
/// # Shapes
/// `a`, `b`: the same shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.sizes(), b.sizes(), "max_abs_diff: shapes differ");
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
}

/// How many float32 values lie between `a` and `b`, plus one: 0 for equal values (and for
/// `0.0` against `-0.0`, and for two NaNs), 1 for neighbours. The distance a failure message
/// gives when two computations of the same formula round differently.
///
/// ```
/// use shared::testing::ulps;
/// assert_eq!(ulps(1.0, 1.0 + f32::EPSILON), 1);
/// assert_eq!(ulps(-0.0, 0.0), 0);
/// assert_eq!(ulps(-f32::MIN_POSITIVE, f32::MIN_POSITIVE), 2 * 0x0080_0000);
/// ```
pub fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    // Maps the floats onto a line where neighbouring floats are neighbouring integers.
    let line = |x: f32| {
        let bits = x.to_bits();
        let magnitude = i64::from(bits & 0x7fff_ffff);
        if bits >> 31 == 1 {
            -magnitude
        } else {
            magnitude
        }
    };
    line(a).abs_diff(line(b))
}

/// Checks against libtorch's own autograd, for the `tch` back-end's tests.
#[cfg(feature = "tch")]
pub mod libtorch {
    use crate::backend::torch::{from_tch, to_tch};
    use crate::tensor::Tensor;

    /// `t` on libtorch's CPU as a leaf whose gradient autograd will keep.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn leaf(t: &Tensor) -> tch::Tensor {
        to_tch(t, tch::Device::Cpu).detach().set_requires_grad(true)
    }

    /// Panics unless every value of `ours` equals libtorch's `theirs` bit for bit or lies
    /// within `rtol` of `theirs`'s largest magnitude (libtorch's products add in the order
    /// of its processor), naming `what`, the value and both numbers.
    ///
    /// # Shapes
    /// `ours`, `theirs`: the same shape.
    #[track_caller]
    pub fn assert_agrees(what: &str, ours: &Tensor, theirs: &tch::Tensor, rtol: f32) {
        let theirs = from_tch(theirs);
        assert_eq!(ours.sizes(), theirs.sizes(), "{what}");
        let theirs = theirs.to_vec();
        let scale = theirs.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        for (i, (o, t)) in ours.to_vec().iter().zip(theirs).enumerate() {
            assert!(
                o.to_bits() == t.to_bits() || (o - t).abs() <= rtol * scale,
                "{what}[{i}]: ours {o:e}, libtorch {t:e} ({} ulps apart)",
                super::ulps(*o, t)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn names_the_first_difference() {
        let want = tensor!([[1.0, 2.0], [3.0, 4.0]]);
        let got = tensor!([[1.0, 2.0], [3.1, 4.0]]);
        assert!(close(&want, &want, 0.0, 0.0));
        assert!(close(&got, &want, 0.05, 0.0));
        let message = difference(&got, &want, 1e-5, 1e-8).expect("they differ");
        assert!(
            message
                .starts_with("first difference at index [1, 0]: got 3.1e0, want 3e0")
        );
        assert!(!close(&tensor!([1.0, 2.0]), &want, 1.0, 1.0));
    }

    #[test]
    fn weights_are_drawn_side_by_side() {
        let want = tensor!([[1.0, 0.0], [0.5, 0.5]]);
        let got = tensor!([[0.0, 1.0], [0.5, 0.5]]);
        assert_eq!(
            weights_side_by_side(&want, &got).unwrap(),
            "want              got\n\
             \x20   0      1          0      1\n\
             0 ██1.00      0   0      0 ██1.00\n\
             1 ▒▒0.50 ▒▒0.50   1 ▒▒0.50 ▒▒0.50\n\
             (blank = 0, ██ = 1.00)\n"
        );
        let scores = tensor!([[2.0, -1.0], [0.5, 0.5]]);
        assert_eq!(weights_side_by_side(&scores, &got), None, "scores");
        let vectors = (tensor!([0.5, 0.5]), tensor!([1.0, 0.0]));
        assert_eq!(weights_side_by_side(&vectors.0, &vectors.1), None, "1-D");
        let message =
            std::panic::catch_unwind(|| assert_close(&got, &want, 1e-5, 1e-8))
                .unwrap_err()
                .downcast::<String>()
                .unwrap();
        assert!(message.ends_with(&weights_side_by_side(&want, &got).unwrap()));
    }

    #[test]
    #[should_panic(expected = "tensors are not close: first difference at index [1]")]
    fn assert_close_panics_with_the_index() {
        assert_close(&tensor!([1.0, 2.5]), &tensor!([1.0, 2.0]), 1e-5, 1e-8);
    }
}
