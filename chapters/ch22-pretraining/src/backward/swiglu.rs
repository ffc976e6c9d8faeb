//! SwiGLU's backward: `W_down`, the product of the two branches, SiLU on the gate branch,
//! then both projections, whose input gradients add (the input fed both).
//!
//! For `gated = silu(a) ⊙ b`, each factor's gradient is the output's gradient times the
//! other factor: `∂L/∂b = g ⊙ silu(a)` and `∂L/∂silu(a) = g ⊙ b`.

use ch10_backward::linear::LinearGrads;
use ch15_modern_layer::swiglu::SwiGLU;
use shared::Tensor;

use crate::arithmetic::Arithmetic;

/// The gradients of SwiGLU's three projections and of its input.
#[derive(Clone, Debug)]
pub struct SwiGluGrads {
    /// The gate branch.
    pub w_gate: LinearGrads,
    /// The value branch.
    pub w_up: LinearGrads,
    /// The way back to the stream.
    pub w_down: LinearGrads,
    /// The input's: both branches' added.
    pub input: Tensor,
    /// The gradient of `W_gate`'s output, SiLU's input: with the input, all that
    /// `W_gate`'s gradient sums over the tokens.
    pub grad_gate: Tensor,
    /// The gradient of `W_up`'s output: with the input, all that `W_up`'s gradient sums
    /// over the tokens.
    pub grad_up: Tensor,
}

/// The backward of `ffn.forward(x)`, from what its forward computed: `gate = W_gate x`,
/// `up = W_up x`, `gated = silu(gate) ⊙ up`.
///
/// # Shapes
/// `x`, `grad_out`: `[.., d_model]`; `gate`, `up`, `gated`: `[.., d_ff]`.
// ANCHOR: swiglu_backward
pub fn swiglu_backward<A: Arithmetic>(
    ffn: &SwiGLU,
    x: &Tensor,
    (gate, up, gated): (&Tensor, &Tensor, &Tensor),
    grad_out: &Tensor,
) -> SwiGluGrads {
    let w_down = A::linear_backward(&ffn.w_down, gated, grad_out);
    let grad_up = &w_down.input * &gate.silu();
    let grad_gate = A::silu_backward(gate, &(&w_down.input * up));
    let w_up = A::linear_backward(&ffn.w_up, x, &grad_up);
    let w_gate = A::linear_backward(&ffn.w_gate, x, &grad_gate);
    let input = &w_up.input + &w_gate.input;
    SwiGluGrads {
        w_gate,
        w_up,
        w_down,
        input,
        grad_gate,
        grad_up,
    }
}
// ANCHOR_END: swiglu_backward
