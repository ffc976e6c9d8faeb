//! Layer norm as the formula writes it, beside the block's `LayerNorm`.
//!
//! `LN(x) = (x − μ) / √(σ² + ε) · γ + β` over the features of every token, with the mean
//! `μ` and the biased variance `σ²` of that token's vector. The block's `shared::nn::LayerNorm`
//! computes the same numbers in the order of PyTorch's CPU kernel, so that its last bits are
//! PyTorch's (see the appendix "How we match PyTorch exactly"); the two agree to a few
//! float32 steps, which a test checks.

use shared::Tensor;

/// Normalises every vector along the last dim, then scales by `gamma` and shifts by `beta`.
///
/// # Shapes
/// `x`: `[.., d]`; `gamma`, `beta`: `[d]`. Returns the shape of `x`.
// ANCHOR: layer_norm
pub fn layer_norm(x: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f32) -> Tensor {
    let mean = x.mean_dim(-1, true); // μ, one per token
    let centered = x - &mean;
    let variance = (&centered * &centered).mean_dim(-1, true); // σ², divided by d
    let normalised = &centered / &(variance + eps).sqrt();
    &(&normalised * gamma) + beta
}
// ANCHOR_END: layer_norm
