//! Softmax: turns a row of scores into weights that are positive and sum to 1.
//!
//! `softmax(x)_i = exp(x_i) / Σ_j exp(x_j)`. Computed as written, `exp` overflows to `inf`
//! for scores above about 88 and the result becomes `inf / inf = NaN`. Subtracting the row's
//! maximum first changes nothing mathematically (the factor `exp(-max)` cancels) but keeps
//! every exponent at most 0, so nothing overflows. That is the "numerically stable" softmax
//! PyTorch computes, and the one here. `log_softmax` is its logarithm, computed without ever
//! taking the log of a tiny weight: `(x_i − max) − ln Σ_j exp(x_j − max)`.
//!
//! How PyTorch's CPU kernels order the arithmetic, so that every weight has PyTorch's exact
//! bits, is in `crate::kernels::softmax`; this module states the operation.

use crate::backend::on_libtorch;
use crate::error::{Result, or_panic};
use crate::kernels::softmax::{columns, rows, vector};
use crate::tensor::Tensor;

/// Which of the two functions to compute.
#[derive(Clone, Copy)]
enum Function {
    Softmax,
    LogSoftmax,
}

impl Function {
    fn name(self) -> &'static str {
        match self {
            Function::Softmax => "softmax",
            Function::LogSoftmax => "log_softmax",
        }
    }
}

impl Tensor {
    /// `torch.softmax(t, dim)`: softmax along `dim`, stable against overflow.
    /// A row that is all `-inf` has no defined weights and comes out as NaN, like PyTorch.
    ///
    /// ```
    /// use shared::tensor;
    /// let weights = tensor!([2.0, 1.0, 0.1]).softmax(0);
    /// assert_eq!(weights.to_string(), "tensor([0.6590, 0.2424, 0.0986])");
    /// ```
    ///
    /// # Shapes
    /// Any shape, unchanged; `dim` in `[-ndim, ndim)` (any dim of a 0-d tensor is `0` or `-1`).
    pub fn f_softmax(&self, dim: i64) -> Result<Tensor> {
        on_libtorch!(|device| {
            self.f_softmax_dim(Function::Softmax, dim)?;
            crate::backend::torch::f_unary(
                "softmax",
                self,
                self.sizes(),
                device,
                |t| t.f_softmax(dim, tch::Kind::Float),
            )
        });
        self.softmax_like(Function::Softmax, dim)
    }

    /// Plain form of [`Tensor::f_softmax`].
    #[track_caller]
    pub fn softmax(&self, dim: i64) -> Tensor {
        or_panic(self.f_softmax(dim))
    }

    /// `torch.log_softmax(t, dim)`: the logarithm of the softmax along `dim`, computed as
    /// `(x − max) − ln Σ exp(x − max)`, exact where `softmax(dim).log()` would round tiny
    /// weights to 0 and give `-inf`.
    ///
    /// # Shapes
    /// Any shape, unchanged; `dim` in `[-ndim, ndim)` (any dim of a 0-d tensor is `0` or `-1`).
    pub fn f_log_softmax(&self, dim: i64) -> Result<Tensor> {
        on_libtorch!(|device| {
            self.f_softmax_dim(Function::LogSoftmax, dim)?;
            crate::backend::torch::f_unary(
                "log_softmax",
                self,
                self.sizes(),
                device,
                |t| t.f_log_softmax(dim, tch::Kind::Float),
            )
        });
        self.softmax_like(Function::LogSoftmax, dim)
    }

    /// Plain form of [`Tensor::f_log_softmax`].
    #[track_caller]
    pub fn log_softmax(&self, dim: i64) -> Tensor {
        or_panic(self.f_log_softmax(dim))
    }

    /// The dim index, where a 0-d tensor counts as one row of one element (dims 0 and -1).
    fn f_softmax_dim(&self, function: Function, dim: i64) -> Result<usize> {
        Ok(self
            .f_dim_index_or_scalar(function.name(), dim)?
            .unwrap_or(0))
    }

    fn softmax_like(&self, function: Function, dim: i64) -> Result<Tensor> {
        let d = self.f_softmax_dim(function, dim)?;
        let dims = self.sizes();
        if self.numel() == 0 {
            return Ok(self.clone());
        }
        // The kernels read the values row major, as PyTorch's (which copy a strided view first).
        let input = self.contiguous();
        let x = input.as_slice().expect("contiguous");
        let mut out = vec![0.0f32; x.len()];
        let v = vector::Vector::current();
        // [outer, n, inner]: the dims before `d`, `d` itself, the dims after it.
        let n = dims.get(d).copied().unwrap_or(1);
        let inner: usize = dims.iter().skip(d + 1).product();
        let outer = x.len() / (n * inner);
        let last_dim = d + 1 >= dims.len();
        match (function, last_dim) {
            (Function::Softmax, true) => rows::softmax(x, &mut out, n, v),
            (Function::LogSoftmax, true) => rows::log_softmax(x, &mut out, n, v),
            (Function::Softmax, false) => {
                columns::softmax(x, &mut out, [outer, n, inner], v)
            }
            (Function::LogSoftmax, false) => {
                columns::log_softmax(x, &mut out, [outer, n, inner], v)
            }
        }
        Ok(Tensor::from_vec(out, dims))
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
        assert_eq!(
            tensor!([1.0]).f_log_softmax(-2).unwrap_err().to_string(),
            "log_softmax: dim -2 is out of range for a tensor of 1 dimension (expected to be in range of [-1, 0], but got -2)"
        );
    }

    #[test]
    fn log_softmax_keeps_what_softmax_rounds_to_zero() {
        let x = tensor!([0.0, -200.0]);
        assert_eq!(x.softmax(0).to_vec(), vec![1.0, 0.0]);
        assert_eq!(x.log_softmax(0).to_vec(), vec![0.0, -200.0]);
        // A 0-d tensor is one row of one element.
        assert_eq!(crate::Tensor::scalar(3.0).log_softmax(-1).item(), 0.0);
        assert_eq!(
            crate::Tensor::scalar(3.0).softmax(0).sizes(),
            &[] as &[usize]
        );
    }
}
