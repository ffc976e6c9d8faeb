//! A hybrid stack, as Qwen3-Next and Kimi Linear stack their layers: three Gated DeltaNet
//! layers, then one layer of causal softmax attention, each a pre-norm residual block
//! `x + layer(RMSNorm(x))`.
//!
//! The delta layers carry a state of fixed size; the softmax layer keeps every key and
//! value, and recalls what the states forgot. One head per layer, no feed-forward network,
//! weights drawn as `nn.Linear`'s and `nn.Conv1d`'s.

use ch15_modern_layer::attention::EPS;
use shared::Tensor;
use shared::nn::{Linear, RMSNorm};

use crate::gated_layer::GatedDeltaNet;
use crate::memory::{Memory, numbers_kept};
use crate::parallel::softmax_attention;
use crate::short_conv::KERNEL;

/// What mixes the tokens in one layer of the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mixer {
    /// Gated DeltaNet: a `d × d` state, updated token by token.
    GatedDelta,
    /// Causal softmax attention: a cache of every key and value.
    Softmax,
}

/// Three Gated DeltaNet layers for every softmax layer.
pub const PATTERN: [Mixer; 4] = [
    Mixer::GatedDelta,
    Mixer::GatedDelta,
    Mixer::GatedDelta,
    Mixer::Softmax,
];

/// One layer of the stack: its norm, its projections and, for Gated DeltaNet, the
/// convolutions, gates and output norm around the recurrence.
pub struct HybridLayer {
    /// The token mixer.
    pub mixer: Mixer,
    /// Pre-norm RMSNorm over `d_model` features (chapter 15's epsilon).
    pub norm: RMSNorm,
    /// `[d_model, d_model]` each, no bias.
    pub w_query: Linear,
    /// `[d_model, d_model]`, no bias.
    pub w_key: Linear,
    /// `[d_model, d_model]`, no bias.
    pub w_value: Linear,
    /// `[d_model, d_model]`, no bias.
    pub out_proj: Linear,
    /// What a Gated DeltaNet layer adds around its recurrence (none for softmax).
    pub delta: Option<GatedDeltaNet>,
}

impl HybridLayer {
    /// Draws `W_query`, `W_key`, `W_value`, `out_proj`, then (Gated DeltaNet only) the
    /// parts of [`GatedDeltaNet::new`], in that order, from the default generator.
    ///
    /// # Shapes
    /// Inputs of `[T, d_model]`.
    pub fn new(mixer: Mixer, d_model: usize) -> HybridLayer {
        let square = || Linear::new(d_model, d_model, false);
        let (w_query, w_key, w_value, out_proj) =
            (square(), square(), square(), square());
        let delta = (mixer == Mixer::GatedDelta).then(|| GatedDeltaNet::new(d_model));
        HybridLayer {
            mixer,
            norm: RMSNorm::with_options(&[d_model], Some(EPS), true),
            w_query,
            w_key,
            w_value,
            out_proj,
            delta,
        }
    }

    /// `x + out_proj(mixer(RMSNorm(x)))`.
    ///
    /// # Shapes
    /// `x`: `[T, d_model]`. Returns `[T, d_model]`.
    // ANCHOR: hybrid_layer
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let h = self.norm.forward(x);
        let (q, k, v) = (
            self.w_query.forward(&h),
            self.w_key.forward(&h),
            self.w_value.forward(&h),
        );
        let mixed = match &self.delta {
            Some(delta) => delta.forward(&h, &q, &k, &v),
            None => softmax_attention(&q, &k, &v),
        };
        x + &self.out_proj.forward(&mixed)
    }
    // ANCHOR_END: hybrid_layer

    /// The numbers this layer keeps for one sequence after `tokens` tokens: the state of a
    /// Gated DeltaNet layer and the last three inputs of its three convolutions, the KV
    /// cache of a softmax layer.
    ///
    /// # Shapes
    /// Scalars.
    pub fn numbers_kept(&self, tokens: usize) -> usize {
        let d = self.w_query.weight.size(0);
        let Memory { kv_cache, state } = numbers_kept(tokens, d, d);
        match self.mixer {
            Mixer::GatedDelta => state + (KERNEL - 1) * 3 * d,
            Mixer::Softmax => kv_cache,
        }
    }
}

/// The layers of [`PATTERN`], drawn in order.
///
/// # Shapes
/// Inputs of `[T, d_model]`.
pub fn hybrid_stack(d_model: usize) -> Vec<HybridLayer> {
    PATTERN
        .iter()
        .map(|&mixer| HybridLayer::new(mixer, d_model))
        .collect()
}

/// The stack's output: every layer in turn, each adding to the residual stream.
///
/// # Shapes
/// `x`: `[T, d_model]`. Returns `[T, d_model]`.
// ANCHOR: hybrid_forward
pub fn hybrid_forward(layers: &[HybridLayer], x: &Tensor) -> Tensor {
    layers.iter().fold(x.clone(), |x, layer| layer.forward(&x))
}
// ANCHOR_END: hybrid_forward
