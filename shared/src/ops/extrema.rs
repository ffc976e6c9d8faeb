//! Extrema: the largest and smallest values (`max`, `min`) and where they are (`argmax`,
//! `argmin`), over everything or along one dim, and of two tensors position by position
//! (`maximum`, `minimum`).
//!
//! Two rules decide the answers, as in PyTorch: NaN wins (a row with a NaN has NaN as its
//! maximum and minimum, and the index of its first NaN), and on ties the first index wins.
//! `scores.argmax_dim(-1, false)` is the token each row would pick greedily.

use ndarray::{ArrayD, Axis, IxDyn};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::kernels::vector_loop::vectorised_run;
use crate::ops::elementwise::f_zip_with;
use crate::tensor::{Element, Tensor, normalize_dim};

/// Which end of the order an extremum looks for.
#[derive(Clone, Copy)]
enum Extreme {
    Max,
    Min,
}

impl Extreme {
    /// Whether `x` replaces the best value so far, `best`: a strictly better value, or the
    /// first NaN. Equal values do not replace, so the first index wins ties.
    fn beats(self, x: f32, best: f32) -> bool {
        if best.is_nan() {
            return false;
        }
        x.is_nan()
            || match self {
                Extreme::Max => x > best,
                Extreme::Min => x < best,
            }
    }

    /// The value and the index of the extremum of a non-empty lane.
    fn of_lane(self, lane: impl Iterator<Item = f32>) -> (f32, usize) {
        let mut best = (f32::NAN, usize::MAX);
        for (i, x) in lane.enumerate() {
            if i == 0 || self.beats(x, best.0) {
                best = (x, i);
            }
        }
        best
    }

    /// The extremum of two values, as `torch.maximum`/`torch.minimum` take it: NaN wins,
    /// and of two equal values the first (so `maximum(-0., 0.)` is `-0.`).
    fn of_pair(self, a: f32, b: f32) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if self.beats(b, a) {
            b
        } else {
            a
        }
    }

    /// The extremum of all values, as PyTorch's whole-tensor `max()` folds them: NaN wins,
    /// and of two equal values the later one is kept (so `max()` of `[0., -0.]` is `-0.`).
    fn fold_all(self, values: impl Iterator<Item = f32>) -> f32 {
        values
            .reduce(|acc, x| {
                let acc_wins = match self {
                    Extreme::Max => acc > x,
                    Extreme::Min => acc < x,
                };
                if acc.is_nan() || x.is_nan() {
                    f32::NAN
                } else if acc_wins {
                    acc
                } else {
                    x
                }
            })
            .expect("a non-empty tensor")
    }
}

/// Puts the reduced dim back as size 1 when `keepdim` asks for it.
fn keep<E: Element>(values: ArrayD<E>, dim: usize, keepdim: bool) -> Tensor<E> {
    let values = values.into_shared();
    Tensor::from_array(if keepdim {
        values.insert_axis(Axis(dim))
    } else {
        values
    })
}

/// The error of a whole-tensor reduction on an empty tensor, with PyTorch's words.
fn empty_error(op: &'static str, t: &Tensor) -> Error {
    Error::Shape {
        op,
        detail: format!(
            "Expected reduction dim to be specified for input.numel() == 0 (shape {})",
            shape_list(t.sizes())
        ),
    }
}

impl Tensor {
    /// The extremum along `dim`: values and indices, the reduced dim dropped or kept as 1.
    fn f_extreme_dim(
        &self,
        op: &'static str,
        extreme: Extreme,
        dim: i64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor<i64>)> {
        if self.dim() == 0 {
            // PyTorch treats a 0-d tensor as one value along dim 0 (or -1).
            normalize_dim(op, dim, 1)?;
            return Ok((self.clone(), Tensor::scalar(0)));
        }
        let d = self.f_dim_index(op, dim)?;
        if self.sizes()[d] == 0 {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "Expected reduction dim {d} to have non-zero size (shape {})",
                    shape_list(self.sizes())
                ),
            });
        }
        let found = self
            .array()
            .map_axis(Axis(d), |lane| extreme.of_lane(lane.iter().copied()));
        Ok((
            keep(found.map(|&(value, _)| value), d, keepdim),
            keep(found.map(|&(_, index)| index as i64), d, keepdim),
        ))
    }

    /// `t.max()`: the largest element, as a 0-d tensor (NaN if any element is NaN).
    ///
    /// # Shapes
    /// Any non-empty shape. Returns `[]`.
    pub fn f_max(&self) -> Result<Tensor> {
        if self.numel() == 0 {
            return Err(empty_error("max", self));
        }
        Ok(Tensor::scalar(
            Extreme::Max.fold_all(self.array().iter().copied()),
        ))
    }

    /// Plain form of [`Tensor::f_max`].
    #[track_caller]
    pub fn max(&self) -> Tensor {
        or_panic(self.f_max())
    }

    /// `t.min()`: the smallest element, as a 0-d tensor (NaN if any element is NaN).
    ///
    /// # Shapes
    /// Any non-empty shape. Returns `[]`.
    pub fn f_min(&self) -> Result<Tensor> {
        if self.numel() == 0 {
            return Err(empty_error("min", self));
        }
        Ok(Tensor::scalar(
            Extreme::Min.fold_all(self.array().iter().copied()),
        ))
    }

    /// Plain form of [`Tensor::f_min`].
    #[track_caller]
    pub fn min(&self) -> Tensor {
        or_panic(self.f_min())
    }

    /// `t.max(dim, keepdim)`: the largest values along `dim` and their indices (the first
    /// one on ties, the first NaN if there is one).
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]` (or `[.., 1, ..]` with `keepdim`) for both results;
    /// `n` must not be 0. A 0-d tensor comes back as it is, with index 0.
    pub fn f_max_dim(
        &self,
        dim: i64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor<i64>)> {
        self.f_extreme_dim("max", Extreme::Max, dim, keepdim)
    }

    /// Plain form of [`Tensor::f_max_dim`].
    #[track_caller]
    pub fn max_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor<i64>) {
        or_panic(self.f_max_dim(dim, keepdim))
    }

    /// `t.min(dim, keepdim)`: the smallest values along `dim` and their indices (the first
    /// one on ties, the first NaN if there is one).
    ///
    /// # Shapes
    /// As [`Tensor::f_max_dim`].
    pub fn f_min_dim(
        &self,
        dim: i64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor<i64>)> {
        self.f_extreme_dim("min", Extreme::Min, dim, keepdim)
    }

    /// Plain form of [`Tensor::f_min_dim`].
    #[track_caller]
    pub fn min_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor<i64>) {
        or_panic(self.f_min_dim(dim, keepdim))
    }

    /// `t.argmax(dim, keepdim)`: the indices of [`Tensor::f_max_dim`].
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]` (or `[.., 1, ..]` with `keepdim`); `n` must not be 0.
    pub fn f_argmax_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor<i64>> {
        Ok(self.f_extreme_dim("argmax", Extreme::Max, dim, keepdim)?.1)
    }

    /// Plain form of [`Tensor::f_argmax_dim`].
    #[track_caller]
    pub fn argmax_dim(&self, dim: i64, keepdim: bool) -> Tensor<i64> {
        or_panic(self.f_argmax_dim(dim, keepdim))
    }

    /// `t.argmin(dim, keepdim)`: the indices of [`Tensor::f_min_dim`].
    ///
    /// # Shapes
    /// As [`Tensor::f_argmax_dim`].
    pub fn f_argmin_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor<i64>> {
        Ok(self.f_extreme_dim("argmin", Extreme::Min, dim, keepdim)?.1)
    }

    /// Plain form of [`Tensor::f_argmin_dim`].
    #[track_caller]
    pub fn argmin_dim(&self, dim: i64, keepdim: bool) -> Tensor<i64> {
        or_panic(self.f_argmin_dim(dim, keepdim))
    }

    /// `t.argmax()`: the index of the largest element in the flattened (row-major) tensor.
    ///
    /// # Shapes
    /// Any non-empty shape. Returns `[]`.
    pub fn f_argmax(&self) -> Result<Tensor<i64>> {
        self.f_arg_all("argmax", Extreme::Max)
    }

    /// Plain form of [`Tensor::f_argmax`].
    #[track_caller]
    pub fn argmax(&self) -> Tensor<i64> {
        or_panic(self.f_argmax())
    }

    /// `t.argmin()`: the index of the smallest element in the flattened (row-major) tensor.
    ///
    /// # Shapes
    /// Any non-empty shape. Returns `[]`.
    pub fn f_argmin(&self) -> Result<Tensor<i64>> {
        self.f_arg_all("argmin", Extreme::Min)
    }

    /// Plain form of [`Tensor::f_argmin`].
    #[track_caller]
    pub fn argmin(&self) -> Tensor<i64> {
        or_panic(self.f_argmin())
    }

    /// `torch.maximum(self, other)`: the larger value at every position, with broadcasting
    /// (NaN if either is NaN).
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_maximum(&self, other: &Tensor) -> Result<Tensor> {
        self.f_pairwise("maximum", other, Extreme::Max)
    }

    /// Plain form of [`Tensor::f_maximum`].
    #[track_caller]
    pub fn maximum(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_maximum(other))
    }

    /// `torch.minimum(self, other)`: the smaller value at every position, with broadcasting
    /// (NaN if either is NaN).
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_minimum(&self, other: &Tensor) -> Result<Tensor> {
        self.f_pairwise("minimum", other, Extreme::Min)
    }

    /// Plain form of [`Tensor::f_minimum`].
    #[track_caller]
    pub fn minimum(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_minimum(other))
    }

    /// `maximum` or `minimum`. Their only choice is which of two equal values to return,
    /// which shows only for zeros: `-0.` and `0.` are equal but print differently. PyTorch's
    /// loop returns the first operand's zero where it compares one element at a time, and the
    /// second operand's where it compares a whole vector of them (see `kernels::vector_loop`).
    fn f_pairwise(
        &self,
        op: &'static str,
        other: &Tensor,
        extreme: Extreme,
    ) -> Result<Tensor> {
        let mut out = f_zip_with(op, self, other, |a, b| extreme.of_pair(a, b))?;
        let shape = out.sizes().to_vec();
        let Some(run) = vectorised_run(self, other, &shape) else {
            return Ok(out);
        };
        let lanes = crate::cpu::capability().softmax_lanes();
        let in_vectors = run - run % lanes;
        let second = other
            .stored
            .broadcast(IxDyn(&shape))
            .expect("broadcast above");
        let values = out
            .stored
            .as_slice_mut()
            .expect("a fresh result is contiguous");
        for (i, (x, &b)) in values.iter_mut().zip(second.iter()).enumerate() {
            if i % run < in_vectors && *x == 0.0 && b == 0.0 {
                *x = b;
            }
        }
        Ok(out)
    }

    fn f_arg_all(&self, op: &'static str, extreme: Extreme) -> Result<Tensor<i64>> {
        if self.numel() == 0 {
            return Err(empty_error(op, self));
        }
        // `iter` walks in logical row-major order, whatever the strides.
        let (_, index) = extreme.of_lane(self.array().iter().copied());
        Ok(Tensor::scalar(index as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn nan_wins_and_ties_take_the_first_index() {
        let x = tensor!([1.0, 3.0, 3.0, f32::NAN, f32::NAN]);
        let (value, index) = x.max_dim(0, false);
        assert!(value.item().is_nan());
        assert_eq!(index.item(), 3);
        assert_eq!(tensor!([1.0, 3.0, 3.0, 2.0]).argmax().item(), 1);
        assert_eq!(
            tensor!([4.0, 3.0, 3.0]).argmin_dim(-1, true).to_vec(),
            vec![1]
        );
    }

    #[test]
    fn maximum_keeps_the_first_of_equal_values() {
        let (a, b) = (tensor!([-0.0, 1.0, f32::NAN]), tensor!([0.0, 2.0, 0.0]));
        let max = a.maximum(&b).to_vec();
        assert!(max[0].is_sign_negative() && max[1] == 2.0 && max[2].is_nan());
        assert!(a.minimum(&b).to_vec()[0].is_sign_negative());
    }

    #[test]
    fn empty_and_zero_d() {
        let empty = Tensor::from_vec(vec![], &[2, 0]);
        assert!(
            empty
                .f_max_dim(1, false)
                .unwrap_err()
                .to_string()
                .contains("Expected reduction dim 1 to have non-zero size")
        );
        let s = Tensor::scalar(2.0);
        assert_eq!(s.max_dim(-1, true).1.item(), 0);
        assert!(s.f_argmax_dim(1, false).is_err());
    }
}
