//! The SwiGLU feed-forward network: `W_down (silu(W_gate x) ⊙ W_up x)`.
//!
//! GPT-2's network (chapter 13) widens each token with one matrix, bends it with GELU and
//! narrows it back. SwiGLU widens it twice: one branch through `silu(z) = z·sigmoid(z)`
//! acts as a gate, multiplying the other branch feature by feature. Llama, Qwen and
//! gpt-oss use it (gpt-oss with a clamp and a slightly different gate); with no biases.
//!
//! [`silu`] is the formula; the network calls the tensor's `silu`, PyTorch's `F.silu`,
//! which computes the same formula (a test holds them within two float32 steps).

use shared::Tensor;
use shared::nn::Linear;

/// The gated feed-forward network of a layer.
// ANCHOR: swiglu_struct
pub struct SwiGLU {
    /// `[d_ff, d_model]`, no bias: the gate branch.
    pub w_gate: Linear,
    /// `[d_ff, d_model]`, no bias: the value branch.
    pub w_up: Linear,
    /// `[d_model, d_ff]`, no bias: back to the residual stream's width.
    pub w_down: Linear,
}
// ANCHOR_END: swiglu_struct

/// `silu(x) = x · sigmoid(x) = x / (1 + e^(-x))`, elementwise.
///
/// # Shapes
/// Any shape; unchanged.
// ANCHOR: silu
pub fn silu(x: &Tensor) -> Tensor {
    x / (1.0 + (-x).exp())
}
// ANCHOR_END: silu

impl SwiGLU {
    /// Draws `W_gate`, `W_up`, `W_down` (no bias) from the default generator, in that
    /// order, as `nn.Linear` does.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    pub fn new(d_model: usize, d_ff: usize) -> SwiGLU {
        SwiGLU {
            w_gate: Linear::new(d_model, d_ff, false),
            w_up: Linear::new(d_model, d_ff, false),
            w_down: Linear::new(d_ff, d_model, false),
        }
    }

    /// `W_down (silu(W_gate x) ⊙ W_up x)`, with PyTorch's `F.silu`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    // ANCHOR: swiglu_forward
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let gate = self.w_gate.forward(x).silu();
        self.w_down.forward(&(gate * self.w_up.forward(x)))
    }
    // ANCHOR_END: swiglu_forward
}
