//! The layer: two pre-norm residual branches, attention then the feed-forward network.
//!
//! `h = x + Attention(RMSNorm(x))`, `y = h + SwiGLU(RMSNorm(h))`. The residual stream `x`
//! is never normalised itself: each branch reads a normalised copy and adds its result
//! back, so a layer can pass its input on untouched. No layer holds a bias.

use ch14_generation::KvCache;
use shared::Tensor;
use shared::nn::RMSNorm;

use crate::attention::{Attention, EPS};
use crate::recipe::Recipe;
use crate::swiglu::SwiGLU;

/// One decoder layer.
// ANCHOR: layer_struct
pub struct Layer {
    /// The RMSNorm before attention.
    pub attn_norm: RMSNorm,
    /// The attention.
    pub attn: Attention,
    /// The RMSNorm before the feed-forward network.
    pub ffn_norm: RMSNorm,
    /// The feed-forward network.
    pub ffn: SwiGLU,
}
// ANCHOR_END: layer_struct

impl Layer {
    /// Draws the attention's parameters, then the network's.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    pub fn new(
        d_model: usize,
        n_heads: usize,
        n_kv_heads: usize,
        d_ff: usize,
    ) -> Layer {
        Layer::around(Attention::new(d_model, n_heads, n_kv_heads), d_model, d_ff)
    }

    /// A layer with [`Attention::plain`]: RMSNorm, attention, RMSNorm, SwiGLU and nothing
    /// else, the layer of Llama 2 and 3, to be trained.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    pub fn plain(
        d_model: usize,
        n_heads: usize,
        n_kv_heads: usize,
        d_ff: usize,
    ) -> Layer {
        Layer::around(
            Attention::plain(d_model, n_heads, n_kv_heads),
            d_model,
            d_ff,
        )
    }

    /// The norms and the feed-forward network around `attn`. The norms' weights are ones
    /// and draw nothing, so drawing `attn` before them keeps PyTorch's order.
    fn around(attn: Attention, d_model: usize, d_ff: usize) -> Layer {
        Layer {
            attn_norm: RMSNorm::with_options(&[d_model], Some(EPS), true),
            attn,
            ffn_norm: RMSNorm::with_options(&[d_model], Some(EPS), true),
            ffn: SwiGLU::new(d_model, d_ff),
        }
    }

    /// Every trained tensor of a plain layer, mutable, in `named_parameters()` order:
    /// `attn_norm`, the attention's four projections, `ffn_norm`, the network's three.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let Layer {
            attn_norm,
            attn,
            ffn_norm,
            ffn,
        } = self;
        let mut all: Vec<&mut Tensor> =
            attn_norm.weight.as_mut().into_iter().collect();
        all.extend(attn.projections_mut());
        all.extend(ffn_norm.weight.as_mut());
        let SwiGLU {
            w_gate,
            w_up,
            w_down,
        } = ffn;
        all.extend([&mut w_gate.weight, &mut w_up.weight, &mut w_down.weight]);
        all
    }

    /// The layer over a whole sequence, and the cache its attention leaves.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    // ANCHOR: layer_forward
    pub fn forward(
        &self,
        x: &Tensor,
        recipe: &Recipe,
        window: Option<usize>,
    ) -> (Tensor, KvCache) {
        let (out, cache) =
            self.attn
                .forward(&self.attn_norm.forward(x), recipe, window);
        let h = x + out;
        let y = &h + self.ffn.forward(&self.ffn_norm.forward(&h));
        (y, cache)
    }
    // ANCHOR_END: layer_forward

    /// The layer for one new token at `position`, with its attention's cache.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]`.
    pub fn step(
        &self,
        x_new: &Tensor,
        position: usize,
        cache: &mut KvCache,
        recipe: &Recipe,
    ) -> Tensor {
        let (out, _) =
            self.attn
                .step(&self.attn_norm.forward(x_new), position, cache, recipe);
        let h = x_new + out;
        &h + self.ffn.forward(&self.ffn_norm.forward(&h))
    }
}
