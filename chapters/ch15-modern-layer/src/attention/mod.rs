//! The attention of a 2026 layer: grouped-query heads, QK-norm, RoPE after the head split,
//! softcapped scores, a window on local layers, and a learned sink per head.
//!
//! In order: project the (normalised) tokens to queries, keys and values; split the
//! heads; normalise every query and key head (QK-norm); turn them by their positions
//! (RoPE); score every query against the keys its head group shares, scaled by
//! `1/√head_dim`; cap the scores; hide the future (and, on local layers, the keys that
//! left the window); softmax with the sink column; mix the values; merge the heads and
//! project back. The values are never rotated: RoPE is about where a key is, not what
//! it carries.
//!
//! StreamingLLM (Xiao et al., 2023, "Efficient Streaming Language Models with Attention
//! Sinks") keeps the first few tokens beside a local layer's window: trained models pour
//! much attention onto them, and a window that drops them degrades. Query `i` of a local
//! layer with window `w` and `n` sink tokens sees key `j` if `j <= i` and (`j < n` or
//! `i - w < j`), and the layer's cache keeps those keys.

use ch07_multihead_split::heads::merge_heads;
use ch14_generation::KvCache;
use ch14_generation::gqa::repeat_kv;
use shared::nn::{Linear, RMSNorm};
use shared::{Tensor, cat, randn};

use crate::gate::sigmoid;
use crate::recipe::Recipe;
use crate::sinks::softmax_with_sink;
use crate::softcap::softcap;

#[cfg_attr(feature = "exercise", path = "../../exercises/qkv.rs")]
mod qkv;

/// The RMSNorms' epsilon, as in Llama 3 and Qwen3.
pub const EPS: f64 = 1e-6;

/// One layer's attention: `n_heads` query heads sharing `n_kv_heads` key/value heads.
// ANCHOR: attention_struct
pub struct Attention {
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads; `n_heads` is a multiple of it.
    pub n_kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// `[n_heads · head_dim, d_model]`, no bias.
    pub w_query: Linear,
    /// `[n_kv_heads · head_dim, d_model]`, no bias.
    pub w_key: Linear,
    /// `[n_kv_heads · head_dim, d_model]`, no bias.
    pub w_value: Linear,
    /// `[d_model, n_heads · head_dim]`, no bias: mixes the heads.
    pub out_proj: Linear,
    /// QK-norm: the RMSNorm of every query head and that of every key head, over its
    /// `head_dim` features; `None` in a layer without (chapter 20's Llama).
    pub qk_norm: Option<(RMSNorm, RMSNorm)>,
    /// `[n_heads]`: each head's learned sink logit; `None` in a layer without.
    pub sinks: Option<Tensor>,
    /// `[n_heads · head_dim, d_model]`, no bias: the output gate's projection; `None` in
    /// a layer without.
    pub w_gate: Option<Linear>,
}
// ANCHOR_END: attention_struct

impl Attention {
    /// Draws `W_query`, `W_key`, `W_value`, `out_proj` (as `nn.Linear`, no bias), the sink
    /// logits (`torch.randn(n_heads)`), then `W_gate`, in that order, from the default
    /// generator: a layer with every optional part, which the recipe switches on or off.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    ///
    /// # Panics
    /// If `d_model` is not a multiple of `n_heads`, or `n_heads` not of `n_kv_heads`.
    pub fn new(d_model: usize, n_heads: usize, n_kv_heads: usize) -> Attention {
        // The plain projections first, then what the modern layer adds, in the order
        // PyTorch's module draws them (QK-norm's weights are ones and draw nothing).
        let mut attention = Attention::plain(d_model, n_heads, n_kv_heads);
        let head_dim = attention.head_dim;
        attention.qk_norm = Some((
            RMSNorm::with_options(&[head_dim], Some(EPS), true),
            RMSNorm::with_options(&[head_dim], Some(EPS), true),
        ));
        attention.sinks = Some(randn(&[n_heads]));
        attention.w_gate = Some(Linear::new(d_model, n_heads * head_dim, false));
        attention
    }

    /// The attention of Llama 2 and 3 alone: `W_query`, `W_key`, `W_value`, `out_proj`
    /// drawn in that order, and no QK-norm, sinks or output gate, for a layer that is
    /// trained rather than loaded ([`Attention::new`] adds those three after these).
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    ///
    /// # Panics
    /// As [`Attention::new`].
    pub fn plain(d_model: usize, n_heads: usize, n_kv_heads: usize) -> Attention {
        assert!(
            n_heads > 0 && d_model.is_multiple_of(n_heads),
            "attention: d_model ({d_model}) must be a multiple of n_heads ({n_heads})"
        );
        assert!(
            n_kv_heads > 0 && n_heads.is_multiple_of(n_kv_heads),
            "attention: n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})"
        );
        let head_dim = d_model / n_heads;
        Attention {
            n_heads,
            n_kv_heads,
            head_dim,
            w_query: Linear::new(d_model, n_heads * head_dim, false),
            w_key: Linear::new(d_model, n_kv_heads * head_dim, false),
            w_value: Linear::new(d_model, n_kv_heads * head_dim, false),
            out_proj: Linear::new(n_heads * head_dim, d_model, false),
            qk_norm: None,
            sinks: None,
            w_gate: None,
        }
    }

    /// The four projections' weights, mutable, in `named_parameters()` order:
    /// `W_query`, `W_key`, `W_value`, `out_proj` (a plain layer has nothing else to train).
    pub fn projections_mut(&mut self) -> [&mut Tensor; 4] {
        let Attention {
            w_query,
            w_key,
            w_value,
            out_proj,
            ..
        } = self;
        [
            &mut w_query.weight,
            &mut w_key.weight,
            &mut w_value.weight,
            &mut out_proj.weight,
        ]
    }

    /// How many query heads read each key/value head.
    pub fn n_rep(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// The attention weights of queries over keys: `q·kᵀ/√head_dim`, softcapped, the
    /// `hidden` keys masked, softmaxed (with each head's sink column if the recipe says so
    /// and the layer has sinks).
    ///
    /// # Shapes
    /// `q`: `[batch, n_heads, queries, head_dim]`, `k`: `[batch, n_kv_heads, keys, head_dim]`,
    /// `hidden`: broadcasts to `[queries, keys]`. Returns `[batch, n_heads, queries, keys]`.
    // ANCHOR: weights
    pub fn weights(
        &self,
        q: &Tensor,
        k: &Tensor,
        recipe: &Recipe,
        hidden: Option<&Tensor<bool>>,
    ) -> Tensor {
        let scale = (1.0 / (self.head_dim as f64).sqrt()) as f32;
        let mut scores =
            q.matmul(&repeat_kv(k, self.n_rep()).transpose(2, 3)) * scale;
        if let Some(cap) = recipe.softcap {
            scores = softcap(&scores, cap);
        }
        if let Some(hidden) = hidden {
            scores.masked_fill_(hidden, f32::NEG_INFINITY);
        }
        match &self.sinks {
            Some(sinks) if recipe.sinks => softmax_with_sink(&scores, sinks),
            _ => scores.softmax(-1),
        }
    }
    // ANCHOR_END: weights

    /// Attention over a whole sequence at positions `0..tokens`: every token's output and
    /// the cache it leaves (its rotated keys and its values; only the last `window` on a
    /// local layer).
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]` and a cache of
    /// `[batch, n_kv_heads, min(tokens, window), head_dim]` keys and values.
    // ANCHOR: forward
    pub fn forward(
        &self,
        x: &Tensor,
        recipe: &Recipe,
        window: Option<usize>,
    ) -> (Tensor, KvCache) {
        let t = x.size(1);
        let positions: Vec<usize> = (0..t).collect();
        let (q, k, v) = self.qkv(x, &positions, recipe);
        let hidden = streaming_mask(t, window, recipe.sink_tokens);
        let weights = self.weights(&q, &k, recipe, Some(&hidden));
        let context = weights.matmul(&repeat_kv(&v, self.n_rep()));
        let heads = self.gated(&merge_heads(&context), x, recipe);
        (
            self.out_proj.forward(&heads),
            kept(&k, &v, window, recipe.sink_tokens),
        )
    }
    // ANCHOR_END: forward

    /// Attention for one new token at `position`: its key, already rotated, and its value
    /// appended to the cache (which drops the oldest beyond a local layer's window, keeping
    /// the recipe's sink tokens), its query against every cached key. Returns its output and its attention weights.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]` and weights
    /// `[batch, n_heads, 1, cached]`.
    // ANCHOR: step
    pub fn step(
        &self,
        x_new: &Tensor,
        position: usize,
        cache: &mut KvCache,
        recipe: &Recipe,
    ) -> (Tensor, Tensor) {
        let (q, k, v) = self.qkv(x_new, &[position], recipe);
        let keys = cat(&[&cache.keys, &k], 2);
        let values = cat(&[&cache.values, &v], 2);
        *cache = kept(&keys, &values, cache.window, recipe.sink_tokens);
        let weights = self.weights(&q, &cache.keys, recipe, None);
        let context = weights.matmul(&repeat_kv(&cache.values, self.n_rep()));
        let heads = self.gated(&merge_heads(&context), x_new, recipe);
        (self.out_proj.forward(&heads), weights)
    }
    // ANCHOR_END: step

    /// The merged heads times Qwen3-Next's gate `sigmoid(W_g x)` if the recipe says so and
    /// the layer has the gate.
    ///
    /// # Shapes
    /// `merged_heads`: `[batch, tokens, n_heads · head_dim]`, `x`: `[batch, tokens,
    /// d_model]`. Returns the shape of `merged_heads`.
    // ANCHOR: gated
    pub fn gated(
        &self,
        merged_heads: &Tensor,
        x: &Tensor,
        recipe: &Recipe,
    ) -> Tensor {
        match &self.w_gate {
            Some(w_gate) if recipe.output_gate => {
                merged_heads * sigmoid(&w_gate.forward(x))
            }
            _ => merged_heads.clone(),
        }
    }
    // ANCHOR_END: gated
}

/// Whether query `i` sees key `j`: `j <= i`, and with a window of `w` also `i - w < j`,
/// or `j < n` for StreamingLLM's `n` sink tokens.
// ANCHOR: sees
pub fn sees(i: usize, j: usize, window: Option<usize>, sink_tokens: usize) -> bool {
    let in_window = window.is_none_or(|w| i < j + w);
    j <= i && (in_window || j < sink_tokens)
}
// ANCHOR_END: sees

/// The keys each query may *not* see (`true` = hidden), from [`sees`].
///
/// # Shapes
/// Returns `[tokens, tokens]`: row `i` is query `i`, column `j` key `j`.
pub fn streaming_mask(
    tokens: usize,
    window: Option<usize>,
    sink_tokens: usize,
) -> Tensor<bool> {
    let hidden = (0..tokens)
        .flat_map(|i| (0..tokens).map(move |j| !sees(i, j, window, sink_tokens)))
        .collect();
    Tensor::from_vec(hidden, &[tokens, tokens])
}

/// The keys query `i` sees, in order, as indices.
///
/// # Shapes
/// Returns `[seen]`.
pub fn visible(i: usize, window: Option<usize>, sink_tokens: usize) -> Tensor<i64> {
    let seen: Vec<usize> = (0..=i)
        .filter(|&j| sees(i, j, window, sink_tokens))
        .collect();
    Tensor::from(seen)
}

/// The cache a layer keeps of its keys and values so far: those the last of them sees.
/// The last is the newest token, and the first keys are its first tokens: a cache that
/// kept them before keeps that order.
///
/// # Shapes
/// `k`, `v`: `[batch, n_kv_heads, len, head_dim]`. The cache holds at most
/// `sinks + window` of them on a local layer (`sinks`: StreamingLLM's sink tokens).
// ANCHOR: kept
pub fn kept(k: &Tensor, v: &Tensor, window: Option<usize>, sinks: usize) -> KvCache {
    let seen = visible(k.size(2) - 1, window, sinks);
    KvCache {
        keys: k.index_select(2, &seen),
        values: v.index_select(2, &seen),
        window,
    }
}
// ANCHOR_END: kept
