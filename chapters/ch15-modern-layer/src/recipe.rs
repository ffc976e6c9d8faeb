//! The switches of a layer: which of the 2026 pieces it uses.
//!
//! Every switch changes only the forward pass: the parameters are the same whichever
//! switches are on, so turning one off shows exactly what that piece does. A switch turns
//! on a part the layer has: a layer built without one (chapter 20's model has no sinks, no
//! output gate, no QK-norm) runs without it whatever the switch says.

/// The pieces a layer uses.
#[derive(Clone, Copy, Debug, PartialEq)]
// ANCHOR: recipe
pub struct Recipe {
    /// RoPE's base: pair `i` of a head turns `θ^(-2i/head_dim)` radians a position.
    pub theta: f64,
    /// Llama 3.1's scaling of the slow RoPE frequencies (contexts past 8192 tokens).
    pub llama31_scaling: bool,
    /// QK-norm: an RMSNorm over every query and key head before RoPE.
    pub qk_norm: bool,
    /// Softcapping: the scores become `cap · tanh(score / cap)`.
    pub softcap: Option<f32>,
    /// A learned sink logit per head, in every softmax's denominator.
    pub sinks: bool,
    /// The window of the local layers, in tokens (the query included).
    pub window: usize,
    /// StreamingLLM: the first `sink_tokens` tokens stay visible, and cached, on
    /// local layers beside the window; 0 keeps the window alone.
    pub sink_tokens: usize,
    /// How many local layers come before each global one; `None`: all layers global.
    pub local_per_global: Option<usize>,
    /// Qwen3-Next's output gate: the heads' output times `sigmoid(W_g x)`.
    pub output_gate: bool,
}
// ANCHOR_END: recipe

impl Default for Recipe {
    /// Every piece on: θ = 10 000, QK-norm, a softcap of 5, sinks, a window of 4 on every
    /// other layer (gpt-oss's alternation); StreamingLLM's sink tokens and the output gate
    /// off.
    fn default() -> Recipe {
        Recipe {
            theta: 10_000.0,
            llama31_scaling: false,
            qk_norm: true,
            softcap: Some(5.0),
            sinks: true,
            window: 4,
            sink_tokens: 0,
            local_per_global: Some(1),
            output_gate: false,
        }
    }
}

impl Recipe {
    /// Whether layer `layer` (from 0) is local: every layer is, except the one that closes
    /// each group of `local_per_global` local layers.
    // ANCHOR: is_local
    pub fn is_local(&self, layer: usize) -> bool {
        match self.local_per_global {
            None => false,
            Some(n) => !(layer + 1).is_multiple_of(n + 1),
        }
    }
    // ANCHOR_END: is_local

    /// The window of layer `layer`: `Some(window)` on local layers, `None` on global ones.
    pub fn window_of(&self, layer: usize) -> Option<usize> {
        self.is_local(layer).then_some(self.window)
    }
}

/// The schedule of `n_layers` layers as letters, `L` local and `G` global: with one local
/// per global `LGLG...` (gpt-oss), with five `LLLLLG...` (Gemma 3).
pub fn schedule(n_layers: usize, local_per_global: Option<usize>) -> String {
    let recipe = Recipe {
        local_per_global,
        ..Recipe::default()
    };
    (0..n_layers)
        .map(|i| if recipe.is_local(i) { 'L' } else { 'G' })
        .collect()
}

/// What a model's KV cache holds per layer: the shape of one recipe card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// ANCHOR: cache_card
pub struct CacheCard {
    /// Attention layers.
    pub layers: usize,
    /// Key/value heads per layer.
    pub kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// 4 for float32, 2 for bfloat16.
    pub bytes_per_value: usize,
    /// The window of the local layers, in tokens.
    pub window: usize,
    /// Local layers before each global one; `None`: all layers global.
    pub local_per_global: Option<usize>,
}
// ANCHOR_END: cache_card

impl CacheCard {
    /// The window of layer `layer`: `Some(window)` on local layers, `None` on global ones,
    /// on the same schedule as a [`Recipe`]'s.
    pub fn window_of(&self, layer: usize) -> Option<usize> {
        Recipe {
            window: self.window,
            local_per_global: self.local_per_global,
            ..Recipe::default()
        }
        .window_of(layer)
    }
}
