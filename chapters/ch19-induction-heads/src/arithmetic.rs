//! The arithmetic of a training step, chosen by a type: chapter 10's and 11's formulas
//! ([`Formulas`]), or the same formulas added in PyTorch's order
//! ([`crate::pytorch_order::PytorchOrder`]).

use ch10_backward::attention::{AttentionGrads, AttentionTape, attention_backward};
use ch10_backward::linear::{LinearGrads, linear_backward};
use ch11_training::adamw::{StepConstants, adamw_update};
use ch11_training::cross_entropy::{
    CrossEntropy, cross_entropy, cross_entropy_backward,
};
use shared::Tensor;
use shared::nn::Linear;

/// The five computations of a training step whose order of additions decides the last bits:
/// chapter 10's and 11's formulas ([`Formulas`]), or the same formulas added in PyTorch's
/// order ([`PytorchOrder`](crate::pytorch_order::PytorchOrder)). The two agree to a few units in the last place per step (a
/// test checks it); over thousands of steps those bits grow into other printed digits, so
/// the chapter's printed run uses PyTorch's order (see the appendix on matching PyTorch).
pub trait Arithmetic {
    /// A linear layer's backward: the gradients of its input, weight and bias.
    ///
    /// # Shapes
    /// `x`: `[.., in]`, `grad_y`: `[.., out]`.
    fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads;
    /// The attention core's backward: the gradients of the queries, keys and values.
    ///
    /// # Shapes
    /// `grad_out`: `[.., tokens, d_v]`.
    fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads;
    /// The mean cross-entropy of `logits` against `targets`.
    ///
    /// # Shapes
    /// `logits`: `[rows, classes]`, `targets`: `[rows]`.
    fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy;
    /// The cross-entropy's gradient with respect to the logits.
    ///
    /// # Shapes
    /// `log_probs`: `[rows, classes]`, `targets`: `[rows]`. Returns `[rows, classes]`.
    fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor;
    /// AdamW's update of one parameter element and its two moments.
    ///
    /// # Shapes
    /// Scalars.
    fn adamw_update(p: &mut f32, g: f32, m: &mut f32, v: &mut f32, k: &StepConstants);
}

/// The textbook formulas of chapters 10 and 11.
pub struct Formulas;

impl Arithmetic for Formulas {
    fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads {
        linear_backward(layer, x, grad_y)
    }
    fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads {
        attention_backward(tape, grad_out)
    }
    fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy {
        cross_entropy(logits, targets)
    }
    fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
        cross_entropy_backward(log_probs, targets)
    }
    fn adamw_update(
        p: &mut f32,
        g: f32,
        m: &mut f32,
        v: &mut f32,
        k: &StepConstants,
    ) {
        adamw_update(p, g, m, v, k)
    }
}
