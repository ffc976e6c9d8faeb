//! Qwen3-Next's output gate: every head's output scaled, feature by feature, by a sigmoid
//! of the layer's input before the heads are mixed.
//!
//! `out = W_o (attention(x) ⊙ sigmoid(W_g x))`. A gate near 0 lets a head say nothing for
//! a token, which an attention weight cannot do (the weights of a row always sum to 1);
//! Qiu et al. (2025, "Gated Attention for Large Language Models") found that it removes
//! the first token's role as a dump for unwanted attention, the attention sink.

use shared::Tensor;

/// `sigmoid(z) = 1 / (1 + e^(-z))`, elementwise, computed in float64 and rounded once to
/// float32, so that its digits are the same on every processor.
///
/// # Shapes
/// Any shape; unchanged.
// ANCHOR: sigmoid
pub fn sigmoid(z: &Tensor) -> Tensor {
    let values = z
        .to_vec()
        .into_iter()
        .map(|x| (1.0 / (1.0 + (-(x as f64)).exp())) as f32)
        .collect();
    Tensor::from_vec(values, z.sizes())
}
// ANCHOR_END: sigmoid
