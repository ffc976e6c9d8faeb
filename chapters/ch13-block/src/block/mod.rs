//! A pre-norm transformer block as GPT-2 builds it, around chapter 7's causal multi-head
//! attention.
//!
//! Each of the two sub-layers reads a normalised copy of the residual stream and adds its
//! result back: `x = x + attn(ln_1(x))`, then `x = x + mlp(ln_2(x))`. The forward pass is in
//! `forward.rs` (an exercise); the post-norm order of the original Transformer is
//! [`TransformerBlock::forward_post_norm`].

use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::Tensor;
use shared::nn::LayerNorm;

use crate::mlp::Mlp;

#[cfg_attr(feature = "exercise", path = "../../exercises/block_forward.rs")]
mod forward;

/// GPT-2's block, with GPT-2's names for its parts. Dropout is 0 here (GPT-2 trained with
/// 0.1 on the attention weights and on both sub-layers' outputs; at inference it is off).
// ANCHOR: block_struct
pub struct TransformerBlock {
    /// Normalises the tokens before attention (weight ones, bias zeros at init).
    pub ln_1: LayerNorm,
    /// Causal multi-head self-attention, `d_model → d_model`, with biases on
    /// the query, key and value projections as in GPT-2.
    pub attn: MultiHeadAttention,
    /// Normalises the tokens before the MLP.
    pub ln_2: LayerNorm,
    /// The feed-forward network, `d_model → 4·d_model → d_model`.
    pub mlp: Mlp,
}
// ANCHOR_END: block_struct

impl TransformerBlock {
    /// `TransformerBlock(d_model, n_heads, context_length)`: the layer norms draw nothing;
    /// the attention's four `Linear`s, then the MLP's two, draw from the default generator
    /// in that order, so `manual_seed` gives PyTorch's weights.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]` with `tokens <= context_length`.
    ///
    /// # Panics
    /// If `d_model` is not divisible by `n_heads`.
    pub fn new(
        d_model: usize,
        n_heads: usize,
        context_length: usize,
    ) -> TransformerBlock {
        TransformerBlock::with_bias(d_model, n_heads, context_length, true)
    }

    /// The block with or without biases: `bias = false` leaves them out of both layer
    /// norms, the attention's four projections and the MLP, as nanoGPT's `bias=False`.
    /// The draws are those of [`TransformerBlock::new`] without the biases'.
    ///
    /// # Shapes
    /// As [`TransformerBlock::new`].
    ///
    /// # Panics
    /// If `d_model` is not divisible by `n_heads`.
    pub fn with_bias(
        d_model: usize,
        n_heads: usize,
        context_length: usize,
        bias: bool,
    ) -> TransformerBlock {
        let layer_norm = || LayerNorm::with_options(&[d_model], 1e-5, true, bias);
        TransformerBlock {
            ln_1: layer_norm(),
            attn: MultiHeadAttention::with_biases(
                d_model,
                d_model,
                context_length,
                0.0,
                n_heads,
                bias,
                bias,
            ),
            ln_2: layer_norm(),
            mlp: Mlp::with_bias(d_model, bias),
        }
    }

    /// Every trained tensor, mutable, in `named_parameters()` order (that of
    /// [`block_parameters`](crate::parameters::block_parameters)): `ln_1`, `attn`, `ln_2`,
    /// `mlp`.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let TransformerBlock {
            ln_1,
            attn,
            ln_2,
            mlp,
        } = self;
        let mut all = layer_norm_parameters_mut(ln_1);
        all.extend(attn.parameters_mut());
        all.extend(layer_norm_parameters_mut(ln_2));
        all.extend(mlp.parameters_mut());
        all
    }

    /// The same block in the order of the original Transformer (post-norm): add first, then
    /// normalise, `x = ln_1(x + attn(x))`, `x = ln_2(x + mlp(x))`. Every output token comes
    /// straight out of a layer norm, so the residual stream itself is normalised after each
    /// sub-layer; in the pre-norm block it is never normalised and grows freely.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    // ANCHOR: post_norm
    pub fn forward_post_norm(&self, x: &Tensor) -> Tensor {
        let x = self.ln_1.forward(&(x + &self.attn.forward(x)));
        self.ln_2.forward(&(&x + &self.mlp.forward(&x)))
    }
    // ANCHOR_END: post_norm
}

/// A layer norm's weight and bias, mutable, those it has.
pub fn layer_norm_parameters_mut(layer: &mut LayerNorm) -> Vec<&mut Tensor> {
    let LayerNorm { weight, bias, .. } = layer;
    weight.as_mut().into_iter().chain(bias.as_mut()).collect()
}
