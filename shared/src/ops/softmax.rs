//! Softmax: turns a row of scores into weights that are positive and sum to 1.
//!
//! `softmax(x)_i = exp(x_i) / Σ_j exp(x_j)`. Computed as written, `exp` overflows to `inf`
//! for scores above about 88 and the result becomes `inf / inf = NaN`. Subtracting the row's
//! maximum first changes nothing mathematically (the factor `exp(-max)` cancels) but keeps
//! every exponent at most 0, so nothing overflows. That is the "numerically stable" softmax
//! PyTorch computes, and the one here.

use ndarray::Axis;

use crate::backend::on_libtorch;
use crate::error::{Result, or_panic};
use crate::tensor::Tensor;

impl Tensor {
    /// `torch.softmax(t, dim)`: softmax along `dim`, stable against overflow.
    /// A row that is all `-inf` has no defined weights and comes out as NaN, like PyTorch.
    ///
    /// # Shapes
    /// Any shape, unchanged; `dim` in `[-ndim, ndim)` (any dim of a 0-d tensor is `0` or `-1`).
    pub fn f_softmax(&self, dim: i64) -> Result<Tensor> {
        if self.dim() == 0 {
            // PyTorch treats a 0-d tensor as one row of one element.
            crate::tensor::normalize_dim("softmax", dim, 1)?;
            return Ok(self.reshape(&[1]).softmax(0).reshape(&[]));
        }
        let d = self.f_dim_index("softmax", dim)?;
        on_libtorch!(|device| Ok(crate::backend::torch::softmax(self, dim, device)));
        let mut out = self.data.to_owned();
        for mut lane in out.lanes_mut(Axis(d)) {
            let max = lane.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            lane.mapv_inplace(|x| (x - max).exp());
            let sum: f32 = lane.iter().sum();
            lane.mapv_inplace(|x| x / sum);
        }
        Ok(Tensor::from_array(out.into_shared()))
    }

    /// Plain form of [`Tensor::f_softmax`].
    #[track_caller]
    pub fn softmax(&self, dim: i64) -> Tensor {
        or_panic(self.f_softmax(dim))
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn rows_sum_to_one_and_survive_large_scores() {
        let w = tensor!([[1000.0, 1000.0], [0.0, f32::NEG_INFINITY]]).softmax(-1);
        assert_eq!(w.to_vec(), vec![0.5, 0.5, 1.0, 0.0]);
        assert_eq!(
            tensor!([1.0]).f_softmax(1).unwrap_err().to_string(),
            "softmax: dim 1 is out of range for a tensor of 1 dimension (expected to be in range of [-1, 0], but got 1)"
        );
    }
}
