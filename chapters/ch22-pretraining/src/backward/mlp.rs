//! GPT-2's MLP backward: `c_proj`, GELU, `c_fc`, each backward in turn.

use ch10_backward::linear::LinearGrads;
use ch13_block::mlp::Mlp;
use shared::Tensor;

use crate::arithmetic::Arithmetic;

/// The gradients of the MLP's two layers; `c_fc.input` is that of the MLP's input.
#[derive(Clone, Debug)]
pub struct MlpGrads {
    /// The widening layer.
    pub c_fc: LinearGrads,
    /// The narrowing layer.
    pub c_proj: LinearGrads,
}

/// The backward of `mlp.forward(x)`, from what its forward computed: the input `x`,
/// `up = c_fc(x)` and `act = gelu(up)`.
///
/// # Shapes
/// `x`, `grad_out`: `[.., d_model]`; `up`, `act`: `[.., 4·d_model]`.
///
/// `A` is the arithmetic: [`Formulas`](ch19_induction_heads::arithmetic::Formulas), or
/// [`PytorchOrder`](ch19_induction_heads::pytorch_order::PytorchOrder) for PyTorch's bits.
// ANCHOR: mlp_backward
pub fn mlp_backward<A: Arithmetic>(
    mlp: &Mlp,
    x: &Tensor,
    up: &Tensor,
    act: &Tensor,
    grad_out: &Tensor,
) -> MlpGrads {
    let c_proj = A::linear_backward(&mlp.c_proj, act, grad_out);
    let grad_up = A::gelu_backward(up, &c_proj.input);
    let c_fc = A::linear_backward(&mlp.c_fc, x, &grad_up);
    MlpGrads { c_fc, c_proj }
}
// ANCHOR_END: mlp_backward
