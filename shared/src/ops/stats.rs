//! Spread: `var` and `std`, over everything or along one dim.
//!
//! `var = Σ (x − mean)² / (n − correction)`: `correction = 1` (the default, Bessel's
//! correction, `unbiased=True`) estimates the variance of the population a sample came
//! from, `correction = 0` is the variance of the values themselves. `std = √var`.
//!
//! PyTorch computes both in `f64` and rounds once to `f32`, in one of two ways. When the
//! result is a single number it takes the `f32` mean first and then sums the squared
//! deviations in `f64` (two passes). Otherwise every output runs Welford's one-pass update,
//! which refines the mean as each value arrives. We do the same, so the results are
//! PyTorch's to the bit.

use ndarray::Axis;

use crate::error::{Result, or_panic};
use crate::kernels::cascade_sum;
use crate::tensor::{Tensor, normalize_dim};

/// Divides the sum of squared deviations by `n − correction` (0, giving `inf` or NaN, when
/// that is not positive), and takes the root for `std`.
fn finish(m2: f64, n: f64, correction: f64, take_sqrt: bool) -> f32 {
    let divisor = if n > correction { n - correction } else { 0.0 };
    let var = m2 / divisor;
    (if take_sqrt { var.sqrt() } else { var }) as f32
}

/// Two passes over all values: the `f32` mean as `t.mean()` gives it, then the squared
/// deviations summed in `f64`.
fn two_pass(values: &[f32], correction: f64, take_sqrt: bool) -> f32 {
    let mean = (cascade_sum::run(values) / values.len() as f32) as f64;
    let m2: f64 = values
        .iter()
        .map(|&x| {
            let d = x as f64 - mean;
            d * d
        })
        .sum();
    finish(m2, values.len() as f64, correction, take_sqrt)
}

/// Welford's one pass in `f64`: each value moves the mean by its share and adds its
/// deviation from the old mean times its deviation from the new one.
fn welford<'a>(
    values: impl Iterator<Item = &'a f32>,
    correction: f64,
    take_sqrt: bool,
) -> f32 {
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    for &x in values {
        n += 1;
        let delta = x as f64 - mean;
        mean += delta / n as f64;
        m2 += delta * (x as f64 - mean);
    }
    finish(m2, n as f64, correction, take_sqrt)
}

impl Tensor {
    /// The engine of `var` and `std`: over all values (`dim = None`) or along one dim.
    fn f_spread(
        &self,
        op: &'static str,
        dim: Option<i64>,
        correction: f64,
        keepdim: bool,
        take_sqrt: bool,
    ) -> Result<Tensor> {
        let shape = self.sizes().to_vec();
        let d = match dim {
            // A 0-d tensor takes dim 0 or -1, like a tensor of one element.
            Some(dim) => Some(normalize_dim(op, dim, self.dim().max(1))?)
                .filter(|_| self.dim() > 0),
            None => None,
        };
        let out_shape: Vec<usize> = match d {
            Some(d) if keepdim => shape
                .iter()
                .enumerate()
                .map(|(i, &s)| if i == d { 1 } else { s })
                .collect(),
            Some(d) => shape
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != d)
                .map(|(_, &s)| s)
                .collect(),
            None if keepdim => vec![1; shape.len()],
            None => vec![],
        };
        if self.numel() == 0 {
            let n = out_shape.iter().product();
            return Tensor::f_from_vec(vec![f32::NAN; n], &out_shape);
        }
        if out_shape.iter().product::<usize>() == 1 {
            let value = two_pass(&self.contiguous().to_vec(), correction, take_sqrt);
            return Tensor::f_from_vec(vec![value], &out_shape);
        }
        let d = d.expect("a full reduction has one output");
        let out = self
            .array()
            .map_axis(Axis(d), |lane| welford(lane.iter(), correction, take_sqrt));
        Tensor::f_from_vec(out.iter().copied().collect(), &out_shape)
    }

    /// `t.var()`: the variance of all values with Bessel's correction (divided by `n − 1`),
    /// as a 0-d tensor.
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn var(&self) -> Tensor {
        self.var_dim(None, 1.0, false)
    }

    /// `t.var(dim, correction=correction, keepdim=keepdim)`: the variance along `dim`, or of
    /// all values for `None`, divided by `n − correction` (`1.0` for `unbiased=True`, `0.0`
    /// for `unbiased=False`). NaN where nothing is left to divide by, as in PyTorch.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`, or `[.., 1, ..]` with `keepdim`; `None` gives `[]`
    /// (all ones with `keepdim`).
    pub fn f_var_dim(
        &self,
        dim: Option<i64>,
        correction: f64,
        keepdim: bool,
    ) -> Result<Tensor> {
        self.f_spread("var", dim, correction, keepdim, false)
    }

    /// Plain form of [`Tensor::f_var_dim`].
    #[track_caller]
    pub fn var_dim(
        &self,
        dim: Option<i64>,
        correction: f64,
        keepdim: bool,
    ) -> Tensor {
        or_panic(self.f_var_dim(dim, correction, keepdim))
    }

    /// `t.std()`: the standard deviation of all values with Bessel's correction, as a 0-d
    /// tensor.
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn std(&self) -> Tensor {
        self.std_dim(None, 1.0, false)
    }

    /// `t.std(dim, correction=correction, keepdim=keepdim)`: the square root of
    /// [`Tensor::f_var_dim`].
    ///
    /// # Shapes
    /// As [`Tensor::f_var_dim`].
    pub fn f_std_dim(
        &self,
        dim: Option<i64>,
        correction: f64,
        keepdim: bool,
    ) -> Result<Tensor> {
        self.f_spread("std", dim, correction, keepdim, true)
    }

    /// Plain form of [`Tensor::f_std_dim`].
    #[track_caller]
    pub fn std_dim(
        &self,
        dim: Option<i64>,
        correction: f64,
        keepdim: bool,
    ) -> Tensor {
        or_panic(self.f_std_dim(dim, correction, keepdim))
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn variance_with_and_without_correction() {
        let x = tensor!([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]]);
        assert_eq!(
            x.var_dim(Some(-1), 1.0, false).to_vec(),
            vec![5.0 / 3.0, 0.0]
        );
        assert_eq!(x.var_dim(Some(1), 0.0, true).to_vec(), vec![1.25, 0.0]);
        assert_eq!(x.var_dim(Some(1), 0.0, true).sizes(), [2, 1]);
        assert_eq!(
            x.std_dim(Some(0), 0.0, false).to_vec(),
            vec![0.5, 0.0, 0.5, 1.0]
        );
        assert!(tensor!([3.0]).var().item().is_nan(), "n − 1 = 0");
        assert_eq!(
            x.f_var_dim(Some(2), 1.0, false).unwrap_err().to_string(),
            "var: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)"
        );
    }
}
