//! The adapter's gradients as their formulas, kept in their own file because they are an
//! exercise.

use shared::Tensor;

use crate::lora::{Lora, LoraGrads};

impl Lora {
    /// The gradients of `A` and `B` in `y = W x + scale · B A x`, given `grad_y`: with
    /// `h = A x` and `g = scale · grad_y`, `∂L/∂B = gᵀ h` and `∂L/∂A = (g B)ᵀ x`, summed
    /// over every token.
    ///
    /// # Shapes
    /// `x`: `[.., d_in]`, `grad_y`: `[.., d_out]`. Returns `A`'s `[r, d_in]` and `B`'s
    /// `[d_out, r]`.
    // ANCHOR: grads
    pub fn grads(&self, x: &Tensor, grad_y: &Tensor) -> LoraGrads {
        let x = x.flatten(0, -2); // [tokens, d_in]
        let g = grad_y.flatten(0, -2) * self.scale; // [tokens, d_out]
        let h = x.matmul(&self.a.t()); // [tokens, r]: what B read
        LoraGrads {
            b: g.t().matmul(&h),
            a: g.matmul(&self.b).t().matmul(&x),
        }
    }
    // ANCHOR_END: grads
}
