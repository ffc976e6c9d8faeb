//! Reductions: `sum`, `mean` and `max`, over everything or along one dim.
//!
//! With `keepdim = true` the reduced dim stays as size 1, so the result still broadcasts
//! against the input: `&weights / &weights.sum_dim(-1, true)` normalises every row.

use ndarray::Axis;

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
use crate::error::{Result, or_panic};
use crate::tensor::Tensor;

impl Tensor {
    /// `t.sum()`: the sum of all elements, as a 0-d tensor.
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn sum(&self) -> Tensor {
        on_libtorch!(|device| torch::unary(self, device, |t| t.sum(tch::Kind::Float)));
        Tensor::scalar(self.data.iter().sum())
    }

    /// `t.sum(dim, keepdim)`: sums along one dim.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`, or `[.., 1, ..]` with `keepdim`.
    pub fn f_sum_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        let d = self.f_dim_index("sum", dim)?;
        on_libtorch!(|device| Ok(torch::unary(self, device, |t| {
            t.sum_dim_intlist(&[dim][..], keepdim, tch::Kind::Float)
        })));
        Ok(keep(self.data.sum_axis(Axis(d)).into_shared(), d, keepdim))
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
            "sum: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)"
        );
    }
}
