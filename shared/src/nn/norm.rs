//! `nn.LayerNorm` and `nn.RMSNorm`: the normalisations of [`Tensor::layer_norm`] and
//! [`Tensor::rms_norm`] with their learnable scale (and shift), initialised as PyTorch does:
//! weight all ones, bias all zeros, so a fresh layer only normalises.

use crate::creation::{ones, zeros};
use crate::error::{Result, or_panic};
use crate::tensor::Tensor;

/// `torch.nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias)`.
#[derive(Clone, Debug)]
pub struct LayerNorm {
    /// The trailing dims normalised together.
    pub normalized_shape: Vec<usize>,
    /// `normalized_shape`, ones at init; `None` without `elementwise_affine`.
    pub weight: Option<Tensor>,
    /// `normalized_shape`, zeros at init; `None` without `elementwise_affine` or `bias`.
    pub bias: Option<Tensor>,
    /// Added to the variance before the square root (PyTorch's default is `1e-5`).
    pub eps: f64,
}

impl LayerNorm {
    /// `nn.LayerNorm(normalized_shape)`: eps `1e-5`, weight of ones and bias of zeros.
    ///
    /// # Shapes
    /// `weight`, `bias`: `normalized_shape`.
    pub fn new(normalized_shape: &[usize]) -> LayerNorm {
        LayerNorm::with_options(normalized_shape, 1e-5, true, true)
    }

    /// `nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias)`.
    ///
    /// # Shapes
    /// `weight`, `bias` (when present): `normalized_shape`.
    pub fn with_options(
        normalized_shape: &[usize],
        eps: f64,
        elementwise_affine: bool,
        bias: bool,
    ) -> LayerNorm {
        LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            weight: elementwise_affine.then(|| ones(normalized_shape)),
            bias: (elementwise_affine && bias).then(|| zeros(normalized_shape)),
            eps,
        }
    }

    /// `layer(x)`: normalise every vector over the last dims, then scale and shift.
    ///
    /// # Shapes
    /// `x`: `[*, normalized_shape]`. Returns the shape of `x`.
    pub fn f_forward(&self, x: &Tensor) -> Result<Tensor> {
        x.f_layer_norm(
            &self.normalized_shape,
            self.weight.as_ref(),
            self.bias.as_ref(),
            self.eps,
        )
    }

    /// Plain form of [`LayerNorm::f_forward`].
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        or_panic(self.f_forward(x))
    }
}

/// `torch.nn.RMSNorm(normalized_shape, eps, elementwise_affine)`.
#[derive(Clone, Debug)]
pub struct RMSNorm {
    /// The trailing dims normalised together.
    pub normalized_shape: Vec<usize>,
    /// `normalized_shape`, ones at init; `None` without `elementwise_affine`.
    pub weight: Option<Tensor>,
    /// Added to the mean square; `None` means `f32::EPSILON`, PyTorch's default.
    pub eps: Option<f64>,
}

impl RMSNorm {
    /// `nn.RMSNorm(normalized_shape)`: default eps, weight of ones.
    ///
    /// # Shapes
    /// `weight`: `normalized_shape`.
    pub fn new(normalized_shape: &[usize]) -> RMSNorm {
        RMSNorm::with_options(normalized_shape, None, true)
    }

    /// `nn.RMSNorm(normalized_shape, eps, elementwise_affine)`.
    ///
    /// # Shapes
    /// `weight` (when present): `normalized_shape`.
    pub fn with_options(
        normalized_shape: &[usize],
        eps: Option<f64>,
        elementwise_affine: bool,
    ) -> RMSNorm {
        RMSNorm {
            normalized_shape: normalized_shape.to_vec(),
            weight: elementwise_affine.then(|| ones(normalized_shape)),
            eps,
        }
    }

    /// `layer(x)`: divide every vector over the last dims by its root mean square, then
    /// scale.
    ///
    /// # Shapes
    /// `x`: `[*, normalized_shape]`. Returns the shape of `x`.
    pub fn f_forward(&self, x: &Tensor) -> Result<Tensor> {
        x.f_rms_norm(&self.normalized_shape, self.weight.as_ref(), self.eps)
    }

    /// Plain form of [`RMSNorm::f_forward`].
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        or_panic(self.f_forward(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn fresh_layers_only_normalise() {
        let x = tensor!([[1.0, 2.0, 4.0], [0.5, -0.5, 3.0]]);
        let ln = LayerNorm::new(&[3]);
        assert_eq!(ln.forward(&x), x.layer_norm(&[3], None, None, 1e-5));
        let rms = RMSNorm::new(&[3]);
        assert_eq!(rms.forward(&x), x.rms_norm(&[3], None, None));
        assert!(LayerNorm::new(&[2]).f_forward(&x).is_err());
    }
}
