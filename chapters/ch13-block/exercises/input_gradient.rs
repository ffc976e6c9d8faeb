//! Exercise (predict, then measure): the gradient at the input of a deep stack. Replace
//! the `todo!()`; test with `cargo test -p ch13-block --features exercise input_gradient`.

use shared::Tensor;

use super::NormPlacement;
use crate::block::TransformerBlock;

/// The gradient of `loss(x) = Σ stack_forward(x) · probe` with respect to every element of
/// `x`, by central differences with `ε = 1e-2` (sum the loss in `f64`).
///
/// # Shapes
/// `x`, `probe`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
pub fn input_gradient(
    blocks: &[TransformerBlock],
    x: &Tensor,
    probe: &Tensor,
    placement: NormPlacement,
) -> Tensor {
    // TODO: before you write it, predict: with 12 blocks, is the gradient at the input
    // larger with pre-norm or with post-norm, and by how much? Then nudge each element of
    // x up and down by ε, run `super::stack_forward` and take the slope of the loss.
    let _ = (blocks, x, probe, placement);
    todo!("input_gradient")
}
