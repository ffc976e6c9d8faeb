//! The adapter's gradients as their formulas, kept in their own file because they are an
//! exercise.

use shared::Tensor;

use crate::lora::{Lora, LoraGrads};

impl Lora {
    /// The gradients of `A` and `B` in `y = W x + scale · B A x`, given `grad_y`.
    ///
    /// # Shapes
    /// `x`: `[.., d_in]`, `grad_y`: `[.., d_out]`. Returns `A`'s `[r, d_in]` and `B`'s
    /// `[d_out, r]`.
    pub fn grads(&self, x: &Tensor, grad_y: &Tensor) -> LoraGrads {
        // TODO: the gradient of B, then of A, summed over every token (every leading dim of
        // x and grad_y is a token); remember the scale.
        let _ = (x, grad_y);
        todo!("the adapter's gradients")
    }
}
