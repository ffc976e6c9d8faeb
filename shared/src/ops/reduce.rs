//! Reductions: `sum`, `mean` and `max`, over everything or along one dim.
//!
//! With `keepdim = true` the reduced dim stays as size 1, so the result still broadcasts
//! against the input: `&weights / &weights.sum_dim(-1, true)` normalises every row.

use ndarray::Axis;

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::Tensor;

use super::cascade_sum;

impl Tensor {
    /// `t.sum()`: the sum of all elements, as a 0-d tensor (0 when empty). Added in
    /// PyTorch's order, so the result has PyTorch's exact bits (see `ops::cascade_sum`).
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn sum(&self) -> Tensor {
        on_libtorch!(|device| torch::unary(self, device, |t| t.sum(tch::Kind::Float)));
        let all = vec![true; self.dim()];
        Tensor::from_vec(cascade_sum::sum(self, &all), &[])
    }

    /// `t.sum(dim, keepdim)`: sums along one dim, in PyTorch's order.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`, or `[.., 1, ..]` with `keepdim`.
    pub fn f_sum_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        let d = self.f_dim_index("sum", dim)?;
        on_libtorch!(|device| Ok(torch::unary(self, device, |t| {
            t.sum_dim_intlist(&[dim][..], keepdim, tch::Kind::Float)
        })));
        let reduced: Vec<bool> = (0..self.dim()).map(|i| i == d).collect();
        let sums = cascade_sum::sum(self, &reduced);
        Ok(Tensor::from_vec(
            sums,
            &reduced_shape(self.dims(), d, keepdim),
        ))
    }

    /// Plain form of [`Tensor::f_sum_dim`].
    #[track_caller]
    pub fn sum_dim(&self, dim: i64, keepdim: bool) -> Tensor {
        or_panic(self.f_sum_dim(dim, keepdim))
    }

    /// `t.mean()`: the average of all elements, as a 0-d tensor (NaN when empty).
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn mean(&self) -> Tensor {
        // PyTorch divides the sum by the count (a true division, not a multiplication by
        // `1 / n`, which would differ in the last bit).
        Tensor::scalar(self.sum().item() / self.numel() as f32)
    }

    /// `t.mean(dim, keepdim)`: averages along one dim.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`, or `[.., 1, ..]` with `keepdim`.
    pub fn f_mean_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        let d = self.f_dim_index("mean", dim)?;
        let n = self.dims()[d] as f32;
        Ok(self.f_sum_dim(dim, keepdim)? / n)
    }

    /// Plain form of [`Tensor::f_mean_dim`].
    #[track_caller]
    pub fn mean_dim(&self, dim: i64, keepdim: bool) -> Tensor {
        or_panic(self.f_mean_dim(dim, keepdim))
    }

    /// `t.max()`: the largest element, as a 0-d tensor (NaN if any element is NaN).
    ///
    /// # Shapes
    /// Any non-empty shape. Returns `[]`.
    pub fn f_max(&self) -> Result<Tensor> {
        if self.numel() == 0 {
            return Err(Error::Shape {
                op: "max",
                detail: format!(
                    "expected a non-empty tensor, got shape {}",
                    shape_list(self.dims())
                ),
            });
        }
        Ok(Tensor::scalar(
            self.data.iter().copied().fold(f32::NEG_INFINITY, max_nan),
        ))
    }

    /// Plain form of [`Tensor::f_max`].
    #[track_caller]
    pub fn max(&self) -> Tensor {
        or_panic(self.f_max())
    }

    /// `t.max(dim, keepdim)`: the largest values along `dim` and their indices (the first
    /// one on ties).
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]` (or `[.., 1, ..]` with `keepdim`) for both results;
    /// `n` must not be 0.
    pub fn f_max_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor<i64>)> {
        let d = self.f_dim_index("max", dim)?;
        if self.dims()[d] == 0 {
            return Err(Error::Shape {
                op: "max",
                detail: format!(
                    "cannot reduce over the empty dim {d} of a tensor of shape {}",
                    shape_list(self.dims())
                ),
            });
        }
        let values = self
            .data
            .fold_axis(Axis(d), f32::NEG_INFINITY, |&acc, &x| max_nan(acc, x));
        let indices = self.data.map_axis(Axis(d), |lane| {
            let mut best = 0;
            for (i, &x) in lane.iter().enumerate() {
                if x > lane[best] || (x.is_nan() && !lane[best].is_nan()) {
                    best = i;
                }
            }
            best as i64
        });
        Ok((
            keep(values.into_shared(), d, keepdim),
            keep(indices.into_shared(), d, keepdim),
        ))
    }

    /// Plain form of [`Tensor::f_max_dim`].
    #[track_caller]
    pub fn max_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor<i64>) {
        or_panic(self.f_max_dim(dim, keepdim))
    }
}

/// `max` that lets NaN win, as PyTorch's `max` propagates NaN.
fn max_nan(acc: f32, x: f32) -> f32 {
    if acc.is_nan() || x.is_nan() {
        f32::NAN
    } else {
        acc.max(x)
    }
}

/// The shape after reducing `dim`: without it, or with size 1 there under `keepdim`.
fn reduced_shape(dims: &[usize], dim: usize, keepdim: bool) -> Vec<usize> {
    let mut shape = dims.to_vec();
    if keepdim {
        shape[dim] = 1;
    } else {
        shape.remove(dim);
    }
    shape
}

/// Puts the reduced dim back as size 1 when `keepdim` asks for it.
fn keep<E: crate::Element>(
    data: ndarray::ArcArray<E, ndarray::IxDyn>,
    dim: usize,
    keepdim: bool,
) -> Tensor<E> {
    let data = if keepdim {
        data.insert_axis(Axis(dim))
    } else {
        data
    };
    Tensor::from_array(data)
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn sums_and_maxima() {
        let m = tensor!([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]);
        assert_eq!(m.sum().item(), 21.0);
        assert_eq!(m.sum_dim(-1, true).shape(), [2, 1]);
        assert_eq!(m.sum_dim(0, false).to_vec(), vec![5.0, 7.0, 9.0]);
        assert_eq!(m.mean().item(), 3.5);
        assert_eq!(m.max().item(), 6.0);
        let (values, indices) = m.max_dim(1, false);
        assert_eq!(values.to_vec(), vec![5.0, 6.0]);
        assert_eq!(indices.to_vec(), vec![1, 2]);
        assert_eq!(
            m.f_sum_dim(2, false).unwrap_err().to_string(),
            "sum: dim 2 is out of range for a tensor of 2 dimensions"
        );
    }
}
