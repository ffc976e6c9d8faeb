//! The SwiGLU feed-forward network: `W_down (silu(W_gate x) ⊙ W_up x)`.
//!
//! GPT-2's network (chapter 13) widens each token with one matrix, bends it with GELU and
//! narrows it back. SwiGLU widens it twice: one branch through `silu(z) = z·sigmoid(z)`
//! acts as a gate, multiplying the other branch feature by feature. Llama, Qwen and
//! gpt-oss use it (gpt-oss with a clamp and a slightly different gate); with no biases.

use shared::Tensor;
use shared::exact::expf_u10;
use shared::nn::Linear;

use ch14_generation::Products;

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

/// [`silu`] as PyTorch's `F.silu` computes it on the CPU: `x / (1 + e^(-x))` with its
/// vectorised `exp` (SLEEF's `expf_u10`). PyTorch takes that path for every element of a
/// tensor whose length is a multiple of 32 (this chapter's widths are); a shorter tail
/// would go through the C library's `exp` instead.
///
/// # Shapes
/// Any shape; unchanged.
pub fn silu_in_pytorch_order(x: &Tensor) -> Tensor {
    let values = x.to_vec().into_iter().map(|v| v / (1.0 + expf_u10(-v)));
    Tensor::from_vec(values.collect(), x.shape().as_ref())
}

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

    /// `W_down (silu(W_gate x) ⊙ W_up x)`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    // ANCHOR: swiglu_forward
    pub fn forward(&self, x: &Tensor, products: Products) -> Tensor {
        let gate = silu_in_pytorch_order(&products.linear(&self.w_gate, x));
        products.linear(&self.w_down, &(gate * products.linear(&self.w_up, x)))
    }
    // ANCHOR_END: swiglu_forward
}
