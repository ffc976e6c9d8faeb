//! The gradient at the input of a stack, kept in its own file because it is an exercise.

use shared::Tensor;

use super::{NormPlacement, stack_forward};
use crate::block::TransformerBlock;

/// The gradient of `loss(x) = Σ stack_forward(x) · probe` with respect to every element of
/// `x`, by central differences: `(loss(x + ε e_i) - loss(x - ε e_i)) / 2ε` for each element
/// `i`, with `ε = 1e-2` (the loss is summed in `f64`).
///
/// # Shapes
/// `x`, `probe`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
// ANCHOR: input_gradient
pub fn input_gradient(
    blocks: &[TransformerBlock],
    x: &Tensor,
    probe: &Tensor,
    placement: NormPlacement,
) -> Tensor {
    let eps = 1e-2f32;
    let probe = probe.to_vec();
    let loss = |x: &Tensor| -> f64 {
        let out = stack_forward(blocks, x, placement).to_vec();
        out.iter()
            .zip(&probe)
            .map(|(o, p)| f64::from(*o) * f64::from(*p))
            .sum()
    };
    let values = x.to_vec();
    let gradient = (0..values.len())
        .map(|i| {
            let nudged = |by: f32| {
                let mut v = values.clone();
                v[i] += by;
                Tensor::from_vec(v, &x.shape().0)
            };
            let slope =
                (loss(&nudged(eps)) - loss(&nudged(-eps))) / (2.0 * f64::from(eps));
            slope as f32
        })
        .collect();
    Tensor::from_vec(gradient, &x.shape().0)
}
// ANCHOR_END: input_gradient
