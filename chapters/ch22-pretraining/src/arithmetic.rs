//! The arithmetic of a training step, chosen by a type, as in chapter 19: the formulas
//! ([`Formulas`]), or the same sums in PyTorch's order ([`PytorchOrder`]). Chapter 19's
//! trait covers the linear layers, the attention core, the loss and AdamW; the models here
//! add the norms and the activations.

use ch19_induction_heads::arithmetic::Formulas;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use shared::Tensor;
use shared::nn::{LayerNorm, RMSNorm};

use crate::backward::NormGrads;
use crate::backward::gelu::gelu_backward;
use crate::backward::layer_norm::layer_norm_backward;
use crate::backward::rms_norm::rms_norm_backward;
use crate::backward::silu::silu_backward;
use crate::clip::clip_grad_norm;
use crate::pytorch_order::{
    clip_grad_norm_in_pytorch_order, gelu_backward_in_pytorch_order,
    layer_norm_backward_in_pytorch_order, rms_norm_backward_in_pytorch_order,
    silu_backward_in_pytorch_order,
};

/// Chapter 19's five computations, and the four backward passes whose order of roundings
/// decides the last bits here.
pub trait Arithmetic: ch19_induction_heads::arithmetic::Arithmetic {
    /// LayerNorm's backward (a weight, no bias).
    ///
    /// # Shapes
    /// `x`, `grad_y`: `[.., d]`.
    fn layer_norm_backward(
        norm: &LayerNorm,
        x: &Tensor,
        grad_y: &Tensor,
    ) -> NormGrads;
    /// The tanh GELU's backward.
    ///
    /// # Shapes
    /// `x`, `grad_y`: the same shape.
    fn gelu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor;
    /// RMSNorm's backward, its input's gradient added to `grad_stream`, the gradient that
    /// reaches the same input by the residual connection (none for the last norm).
    ///
    /// # Shapes
    /// `x`, `grad_y`, `grad_stream`: `[.., d]`.
    fn rms_norm_backward(
        norm: &RMSNorm,
        x: &Tensor,
        grad_y: &Tensor,
        grad_stream: Option<&Tensor>,
    ) -> NormGrads;
    /// SiLU's backward.
    ///
    /// # Shapes
    /// `x`, `grad_y`: the same shape.
    fn silu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor;
    /// Scales the gradients to a global norm of at most `max_norm`; returns their norm.
    ///
    /// # Shapes
    /// `grads`: any shapes.
    fn clip_grad_norm(grads: &mut [Tensor], max_norm: f32) -> f32;
}

impl Arithmetic for Formulas {
    fn layer_norm_backward(
        norm: &LayerNorm,
        x: &Tensor,
        grad_y: &Tensor,
    ) -> NormGrads {
        layer_norm_backward(norm, x, grad_y)
    }
    fn gelu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
        gelu_backward(x, grad_y)
    }
    fn rms_norm_backward(
        norm: &RMSNorm,
        x: &Tensor,
        grad_y: &Tensor,
        grad_stream: Option<&Tensor>,
    ) -> NormGrads {
        let grads = rms_norm_backward(norm, x, grad_y);
        match grad_stream {
            Some(stream) => NormGrads {
                input: stream + &grads.input,
                weight: grads.weight,
            },
            None => grads,
        }
    }
    fn silu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
        silu_backward(x, grad_y)
    }
    fn clip_grad_norm(grads: &mut [Tensor], max_norm: f32) -> f32 {
        clip_grad_norm(grads, max_norm)
    }
}

impl Arithmetic for PytorchOrder {
    fn layer_norm_backward(
        norm: &LayerNorm,
        x: &Tensor,
        grad_y: &Tensor,
    ) -> NormGrads {
        layer_norm_backward_in_pytorch_order(norm, x, grad_y)
    }
    fn gelu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
        gelu_backward_in_pytorch_order(x, grad_y)
    }
    fn rms_norm_backward(
        norm: &RMSNorm,
        x: &Tensor,
        grad_y: &Tensor,
        grad_stream: Option<&Tensor>,
    ) -> NormGrads {
        rms_norm_backward_in_pytorch_order(norm, x, grad_y, grad_stream)
    }
    fn silu_backward(x: &Tensor, grad_y: &Tensor) -> Tensor {
        silu_backward_in_pytorch_order(x, grad_y)
    }
    fn clip_grad_norm(grads: &mut [Tensor], max_norm: f32) -> f32 {
        clip_grad_norm_in_pytorch_order(grads, max_norm)
    }
}
