//! `nn.Linear`: `y = x·Wᵀ + b`.

use crate::backend::on_libtorch;
use crate::error::{Error, Result, or_panic, shape_list};
use crate::rng::{linear_bias_bound, linear_weight_bound, with_default_generator};
use crate::tensor::Tensor;

/// A fully connected layer, `torch.nn.Linear`.
#[derive(Clone, Debug)]
pub struct Linear {
    /// `[out_features, in_features]`: one row per output feature, as PyTorch stores it.
    pub weight: Tensor,
    /// `[out_features]`, or `None` for `bias=False`.
    pub bias: Option<Tensor>,
}

impl Linear {
    /// `nn.Linear(in_features, out_features, bias)` initialised as PyTorch does, from this
    /// thread's default generator: first the weight, uniform in `±bound` with
    /// `bound = gain·√(3/in)` for `kaiming_uniform_(a = √5)` (which works out to `1/√in`),
    /// row by row; then, only with `bias`, the bias, uniform in `±1/√in`.
    ///
    /// # Shapes
    /// `weight`: `[out_features, in_features]`, `bias`: `[out_features]`.
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Linear {
        let weight = with_default_generator(|g| {
            let bound = linear_weight_bound(in_features);
            let mut values = vec![0.0; out_features * in_features];
            g.fill_uniform(&mut values, -bound, bound);
            Tensor::from_vec(values, &[out_features, in_features])
        });
        let bias = bias.then(|| {
            with_default_generator(|g| {
                let bound = linear_bias_bound(in_features);
                let mut values = vec![0.0; out_features];
                g.fill_uniform(&mut values, -bound, bound);
                Tensor::from_vec(values, &[out_features])
            })
        });
        Linear { weight, bias }
    }

    /// A layer with given parameters (to load weights, or to share them between modules).
    ///
    /// # Shapes
    /// `weight`: `[out, in]`, `bias`: `[out]`.
    pub fn f_from_parameters(weight: Tensor, bias: Option<Tensor>) -> Result<Linear> {
        if weight.dim() != 2 {
            return Err(Error::Shape {
                op: "linear",
                detail: format!(
                    "weight must be [out, in], got {}",
                    shape_list(weight.dims())
                ),
            });
        }
        if let Some(b) = &bias
            && b.dims() != [weight.dims()[0]]
        {
            return Err(Error::Shape {
                op: "linear",
                detail: format!(
                    "bias of shape {} does not fit weight of shape {}",
                    shape_list(b.dims()),
                    shape_list(weight.dims())
                ),
            });
        }
        Ok(Linear { weight, bias })
    }

    /// Plain form of [`Linear::f_from_parameters`].
    #[track_caller]
    pub fn from_parameters(weight: Tensor, bias: Option<Tensor>) -> Linear {
        or_panic(Linear::f_from_parameters(weight, bias))
    }

    /// `in_features`.
    pub fn in_features(&self) -> usize {
        self.weight.dims()[1]
    }

    /// `out_features`.
    pub fn out_features(&self) -> usize {
        self.weight.dims()[0]
    }

    /// `layer(x)`: `x·Wᵀ + b` over the last dim of `x`.
    ///
    /// # Shapes
    /// `x`: `[.., in_features]`. Returns `[.., out_features]`.
    pub fn f_forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.dims().last() == Some(&self.in_features()) {
            on_libtorch!(|device| Ok(crate::backend::torch::linear(
                x,
                &self.weight,
                self.bias.as_ref(),
                device
            )));
        }
        let y = x.f_matmul(&self.weight.t()).map_err(|e| match e {
            Error::Shape { detail, .. } => Error::Shape {
                op: "linear",
                detail,
            },
            other => other,
        })?;
        match &self.bias {
            Some(b) => y.f_add(b),
            None => Ok(y),
        }
    }

    /// Plain form of [`Linear::f_forward`].
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        or_panic(self.f_forward(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ones;

    #[test]
    fn forward_over_leading_dims() {
        let layer = Linear::from_parameters(ones(&[2, 3]), Some(ones(&[2])));
        assert_eq!(layer.forward(&ones(&[4, 5, 3])).shape(), [4, 5, 2]);
        assert_eq!(layer.forward(&ones(&[3])).to_vec(), vec![4.0, 4.0]);
        assert_eq!(
            layer.f_forward(&ones(&[6, 2])).unwrap_err().to_string(),
            "linear: mat1 and mat2 shapes cannot be multiplied (6x2 and 3x2)"
        );
    }
}
