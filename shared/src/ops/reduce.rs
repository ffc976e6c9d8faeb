//! Reductions: `sum` and `mean`, over everything or along one dim (`max`, `min` and the
//! `arg` forms are in `extrema`).
//!
//! With `keepdim = true` the reduced dim stays as size 1, so the result still broadcasts
//! against the input: `&weights / &weights.sum_dim(-1, true)` normalises every row.

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
use crate::error::{Result, or_panic};
use crate::tensor::Tensor;

use crate::kernels::cascade_sum;

impl Tensor {
    /// `t.sum()`: the sum of all elements, as a 0-d tensor (0 when empty). Added in
    /// PyTorch's order, so the result has PyTorch's exact bits (see `kernels::cascade_sum`).
    ///
    /// # Shapes
    /// Any shape. Returns `[]`.
    pub fn sum(&self) -> Tensor {
        on_libtorch!(|device| or_panic(torch::f_unary(
            "sum",
            self,
            &[],
            device,
            |t| t.f_sum(tch::Kind::Float)
        )));
        let all = vec![true; self.dim()];
        Tensor::from_vec(cascade_sum::sum(self, &all), &[])
    }

    /// `t.sum(dim, keepdim)`: sums along one dim, in PyTorch's order.
    ///
    /// ```
    /// use shared::tensor;
    /// let x = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    /// assert_eq!(x.sum_dim(-1, false).to_string(), "tensor([ 6., 15., 24.])");
    /// assert_eq!(x.sum_dim(0, true).to_string(), "tensor([[12., 15., 18.]])");
    /// ```
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`, or `[.., 1, ..]` with `keepdim`.
    pub fn f_sum_dim(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        // A 0-d tensor takes dim 0 or -1, as one value to add (PyTorch does the same).
        let Some(d) = self.f_dim_index_or_scalar("sum", dim)? else {
            return Ok(self.sum());
        };
        on_libtorch!(|device| torch::f_unary(
            "sum",
            self,
            &reduced_shape(self.sizes(), d, keepdim),
            device,
            |t| t.f_sum_dim_intlist(&[dim][..], keepdim, tch::Kind::Float)
        ));
        let reduced: Vec<bool> = (0..self.dim()).map(|i| i == d).collect();
        let sums = cascade_sum::sum(self, &reduced);
        Ok(Tensor::from_vec(
            sums,
            &reduced_shape(self.sizes(), d, keepdim),
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
        let n = match self.f_dim_index_or_scalar("mean", dim)? {
            Some(d) => self.sizes()[d] as f32,
            None => 1.0,
        };
        Ok(self.f_sum_dim(dim, keepdim)? / n)
    }

    /// Plain form of [`Tensor::f_mean_dim`].
    #[track_caller]
    pub fn mean_dim(&self, dim: i64, keepdim: bool) -> Tensor {
        or_panic(self.f_mean_dim(dim, keepdim))
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

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn sums_and_means() {
        let m = tensor!([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]);
        assert_eq!(m.sum().item(), 21.0);
        assert_eq!(m.sum_dim(-1, true).shape(), [2, 1]);
        assert_eq!(m.sum_dim(0, false).to_vec(), vec![5.0, 7.0, 9.0]);
        assert_eq!(m.mean().item(), 3.5);
        assert_eq!(m.mean_dim(1, false).to_vec(), vec![3.0, 4.0]);
        // A 0-d tensor is one value along dim 0 or -1; the sum turns -0 into +0.
        let scalar = crate::Tensor::scalar(-0.0);
        assert_eq!(scalar.sum_dim(-1, true).to_vec(), vec![0.0]);
        assert!(scalar.sum_dim(0, false).item().is_sign_positive());
        assert_eq!(crate::Tensor::scalar(3.0).mean_dim(0, false).item(), 3.0);
        assert_eq!(
            m.f_sum_dim(2, false).unwrap_err().to_string(),
            "sum: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)"
        );
    }
}
