//! GPT-2's feed-forward network: every token's vector on its own is widened four times,
//! passed through GELU, and narrowed back.
//!
//! Attention mixes information between tokens; the MLP then works on each token alone.
//! Most of a block's parameters are here (two `d × 4d` matrices against attention's four
//! `d × d`).

use shared::nn::Linear;
use shared::{GeluApproximate, Tensor};

/// GPT-2's MLP, with its parameter names: `c_fc` (the widening "fully connected" layer) and
/// `c_proj` (the projection back).
// ANCHOR: mlp
pub struct Mlp {
    /// `[4·d_model, d_model]`, with bias (unless made without).
    pub c_fc: Linear,
    /// `[d_model, 4·d_model]`, with bias (unless made without).
    pub c_proj: Linear,
}

impl Mlp {
    /// `MLP(d_model)`: draws `c_fc`, then `c_proj`, as PyTorch's `nn.Linear` does.
    ///
    /// # Shapes
    /// `c_fc.weight`: `[4·d_model, d_model]`,
    /// `c_proj.weight`: `[d_model, 4·d_model]`.
    pub fn new(d_model: usize) -> Mlp {
        Mlp::with_bias(d_model, true)
    }

    /// `MLP(d_model)`, with or without biases (nanoGPT's `bias=False`).
    ///
    /// # Shapes
    /// As [`Mlp::new`].
    pub fn with_bias(d_model: usize, bias: bool) -> Mlp {
        Mlp {
            c_fc: Linear::new(d_model, 4 * d_model, bias),
            c_proj: Linear::new(4 * d_model, d_model, bias),
        }
    }

    /// Every trained tensor, mutable, in `named_parameters()` order: `c_fc`, then
    /// `c_proj`, each weight before its bias.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let Mlp { c_fc, c_proj } = self;
        [c_fc, c_proj]
            .into_iter()
            .flat_map(|layer| {
                let Linear { weight, bias } = layer;
                std::iter::once(weight).chain(bias.as_mut())
            })
            .collect()
    }

    /// `c_proj(gelu(c_fc(x)))`. The GELU is the tanh approximation, which
    /// GPT-2's code calls `gelu_new` (`nn.GELU(approximate='tanh')` in
    /// PyTorch): the model was trained with it, so its weights expect it.
    ///
    /// # Shapes
    /// `x`: `[.., d_model]`; the hidden layer is `[.., 4·d_model]`.
    /// Returns `[.., d_model]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let hidden = self.c_fc.forward(x).gelu(GeluApproximate::Tanh);
        self.c_proj.forward(&hidden)
    }
}
// ANCHOR_END: mlp
