//! Comparisons that make masks (`gt`, `lt`, `ge`, `le`, `ne`, next to `eq`), choosing
//! between two tensors with a mask (`where_`), finding the values that are not numbers
//! (`isinf`, `isnan`), and asking whether two tensors agree within a tolerance
//! (`allclose`).
//!
//! A comparison gives a `bool` tensor, the kind of mask `masked_fill` and `where_` take:
//! `scores.gt_scalar(0.0)` is `true` where a score is positive. Every comparison with NaN is
//! `false`, except `ne`, which is `true`: NaN equals nothing, not even itself.

use ndarray::{IxDyn, Zip};

use crate::error::{Error, Result, or_panic};
use crate::ops::broadcast::f_broadcast_shapes;
use crate::ops::elementwise::f_zip_with;
use crate::tensor::{Element, Tensor};

/// Writes the tensor-tensor and tensor-scalar forms of one comparison.
macro_rules! comparison {
    ($op:literal, $f_name:ident, $name:ident, $scalar:ident, $python:literal, $test:expr) => {
        #[doc = concat!("`a ", $python, " b` elementwise (PyTorch's `a.", $op, "(b)`), with broadcasting.")]
        ///
        /// # Shapes
        /// `self`, `other`: broadcastable. Returns the broadcast shape.
        pub fn $f_name(&self, other: &Tensor<E>) -> Result<Tensor<bool>> {
            f_zip_with($op, self, other, $test)
        }

        #[doc = concat!("Plain form of [`Tensor::", stringify!($f_name), "`].")]
        #[track_caller]
        pub fn $name(&self, other: &Tensor<E>) -> Tensor<bool> {
            or_panic(self.$f_name(other))
        }

        #[doc = concat!("`t ", $python, " value` (PyTorch's `t.", $op, "(value)`): a `bool` mask.")]
        ///
        /// # Shapes
        /// Any shape; unchanged.
        pub fn $scalar(&self, value: E) -> Tensor<bool> {
            let test = $test;
            self.map(|x| test(x, value))
        }
    };
}

impl<E: Element + PartialOrd> Tensor<E> {
    comparison!("gt", f_gt, gt, gt_scalar, ">", |x: E, y: E| x > y);
    comparison!("lt", f_lt, lt, lt_scalar, "<", |x: E, y: E| x < y);
    comparison!("ge", f_ge, ge, ge_scalar, ">=", |x: E, y: E| x >= y);
    comparison!("le", f_le, le, le_scalar, "<=", |x: E, y: E| x <= y);
    comparison!("ne", f_ne, ne, ne_scalar, "!=", |x: E, y: E| x != y);
}

/// `torch.where(condition, a, b)`: `a` where `condition` is `true`, else `b`. The three
/// broadcast together, as in PyTorch.
///
/// ```
/// use shared::{tensor, where_};
/// let scores = tensor!([0.5, -1.0, 2.0]);
/// let relu = where_(&scores.gt_scalar(0.0), &scores, &scores.zeros_like());
/// assert_eq!(relu.to_vec(), vec![0.5, 0.0, 2.0]);
/// ```
///
/// # Shapes
/// `condition`, `a`, `b`: broadcastable together. Returns the broadcast shape.
pub fn f_where_<E: Element>(
    condition: &Tensor<bool>,
    a: &Tensor<E>,
    b: &Tensor<E>,
) -> Result<Tensor<E>> {
    // PyTorch checks all three shapes at once; its message names the pair that clashes.
    let ab = f_broadcast_shapes("where", a.sizes(), b.sizes())?;
    let dims = f_broadcast_shapes("where", condition.sizes(), &ab)?;
    let shape = IxDyn(&dims);
    let (condition, a, b) = (
        // An expanded tensor's stored elements broadcast as the tensor itself does.
        condition
            .stored
            .broadcast(shape.clone())
            .expect("checked above"),
        a.stored.broadcast(shape.clone()).expect("checked above"),
        b.stored.broadcast(shape).expect("checked above"),
    );
    crate::storage::f_new("where", &dims, |out| {
        Zip::from(out)
            .and(&condition)
            .and(&a)
            .and(&b)
            .for_each(|o, &keep, &x, &y| *o = if keep { x } else { y });
    })
}

/// Plain form of [`f_where_`].
#[track_caller]
pub fn where_<E: Element>(
    condition: &Tensor<bool>,
    a: &Tensor<E>,
    b: &Tensor<E>,
) -> Tensor<E> {
    or_panic(f_where_(condition, a, b))
}

impl Tensor {
    /// `torch.isinf(t)`: `true` where a value is `inf` or `-inf`.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn isinf(&self) -> Tensor<bool> {
        self.map(f32::is_infinite)
    }

    /// `torch.isnan(t)`: `true` where a value is NaN.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn isnan(&self) -> Tensor<bool> {
        self.map(f32::is_nan)
    }

    /// `torch.allclose(self, other, rtol, atol, equal_nan)`: whether every pair of values is
    /// close, `|a - b| <= atol + rtol * |b|`. Not symmetric: the tolerance scales with
    /// `other`, the expected values. Equal infinities are close; NaN is close to NaN only
    /// with `equal_nan`. PyTorch's defaults are `rtol = 1e-5`, `atol = 1e-8`
    /// ([`Tensor::allclose_default`]).
    ///
    /// The formula is evaluated in `f32`, as PyTorch does for float32 tensors, with the
    /// tolerances rounded to `f32` first.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. `rtol` and `atol` must not be negative.
    pub fn f_allclose(
        &self,
        other: &Tensor,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> Result<bool> {
        for (name, value) in [("rtol", rtol), ("atol", atol)] {
            if value < 0.0 {
                return Err(Error::InvalidArgument {
                    op: "allclose",
                    detail: format!(
                        "{name} must be greater than or equal to zero, but got {value}"
                    ),
                });
            }
        }
        let (rtol, atol) = (rtol as f32, atol as f32);
        let close = f_zip_with("allclose", self, other, |a, b| {
            // `a == b` first: it is what makes two equal infinities close (their difference
            // is NaN).
            a == b
                || (equal_nan && a.is_nan() && b.is_nan())
                || ((a - b).abs().is_finite()
                    && (a - b).abs() <= atol + (rtol * b).abs())
        })?;
        Ok(close.array().iter().all(|&c| c))
    }

    /// Plain form of [`Tensor::f_allclose`].
    #[track_caller]
    pub fn allclose(
        &self,
        other: &Tensor,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> bool {
        or_panic(self.f_allclose(other, rtol, atol, equal_nan))
    }

    /// `torch.allclose(self, other)` with PyTorch's defaults: `rtol = 1e-5`, `atol = 1e-8`,
    /// NaN never close.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable.
    #[track_caller]
    pub fn allclose_default(&self, other: &Tensor) -> bool {
        self.allclose(other, 1e-5, 1e-8, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn nan_compares_false_except_for_ne() {
        let x = tensor!([1.0, f32::NAN, 3.0]);
        assert_eq!(x.gt_scalar(1.0).to_vec(), vec![false, false, true]);
        assert_eq!(x.le_scalar(1.0).to_vec(), vec![true, false, false]);
        assert_eq!(x.ne(&x).to_vec(), vec![false, true, false]);
    }

    #[test]
    fn where_broadcasts_all_three() {
        let cond = Tensor::from_vec(vec![true, false], &[2, 1]);
        let a = tensor!([1.0, 2.0, 3.0]);
        let b = Tensor::scalar(0.0);
        assert_eq!(
            where_(&cond, &a, &b).to_vec(),
            vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0]
        );
        assert!(
            f_where_(&cond, &a, &tensor!([1.0, 2.0]))
                .unwrap_err()
                .to_string()
                .contains(
                    "the size of tensor a (3) must match the size of tensor b (2)"
                )
        );
    }

    #[test]
    fn allclose_scales_with_the_expected_values() {
        let want = tensor!([1000.0, f32::INFINITY]);
        assert!(tensor!([1000.005, f32::INFINITY]).allclose_default(&want));
        assert!(!tensor!([1000.02, f32::INFINITY]).allclose_default(&want));
        let nan = tensor!([f32::NAN]);
        assert!(!nan.allclose_default(&nan));
        assert!(nan.allclose(&nan, 1e-5, 1e-8, true));
    }
}
