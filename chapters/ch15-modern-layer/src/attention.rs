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

use ch07_multihead_split::heads::merge_heads;
use ch14_generation::gqa::repeat_kv;
use ch14_generation::window::sliding_window_mask;
use ch14_generation::{KvCache, Products};
use shared::nn::{Linear, RMSNorm};
use shared::{Tensor, cat, randn};

use crate::recipe::Recipe;
use crate::sinks::softmax_with_sink;
use crate::softcap::softcap;

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
    /// QK-norm of every query head, over its `head_dim` features.
    pub q_norm: RMSNorm,
    /// QK-norm of every key head.
    pub k_norm: RMSNorm,
    /// `[n_heads]`: each head's learned sink logit.
    pub sinks: Tensor,
}
// ANCHOR_END: attention_struct

impl Attention {
    /// Draws `W_query`, `W_key`, `W_value`, `out_proj` (as `nn.Linear`, no bias), then the
    /// sink logits (`torch.randn(n_heads)`), in that order, from the default generator.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    ///
    /// # Panics
    /// If `d_model` is not a multiple of `n_heads`, or `n_heads` not of `n_kv_heads`.
    pub fn new(d_model: usize, n_heads: usize, n_kv_heads: usize) -> Attention {
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
            q_norm: RMSNorm::with_options(&[head_dim], Some(EPS), true),
            k_norm: RMSNorm::with_options(&[head_dim], Some(EPS), true),
            sinks: randn(&[n_heads]),
        }
    }

    /// How many query heads read each key/value head.
    pub fn n_rep(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// The attention weights of queries over keys: `q·kᵀ/√head_dim`, softcapped, the
    /// `hidden` keys masked, softmaxed (with each head's sink column if the recipe says so).
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
        let mut scores = q.matmul(&repeat_kv(k, self.n_rep()).transpose(2, 3)) * scale;
        if let Some(cap) = recipe.softcap {
            scores = softcap(&scores, cap);
        }
        if let Some(hidden) = hidden {
            scores.masked_fill_(hidden, f32::NEG_INFINITY);
        }
        if recipe.sinks {
            softmax_with_sink(&scores, &self.sinks)
        } else {
            scores.softmax(-1)
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
        products: Products,
    ) -> (Tensor, KvCache) {
        let t = x.size(1);
        let positions: Vec<usize> = (0..t).collect();
        let (q, k, v) = self.qkv(x, &positions, recipe, products);
        let v_rep = repeat_kv(&v, self.n_rep());
        let context = match products {
            Products::Batched => {
                let hidden = sliding_window_mask(t, window);
                self.weights(&q, &k, recipe, Some(&hidden)).matmul(&v_rep)
            }
            Products::RowByRow => {
                let rows: Vec<Tensor> = (0..t)
                    .map(|i| {
                        let seen = first_visible(i, window)..i + 1;
                        let weights = self.weights(
                            &q.narrow(2, i, 1),
                            &k.slice(2, seen.clone()),
                            recipe,
                            None,
                        );
                        weights.matmul(&v_rep.slice(2, seen))
                    })
                    .collect();
                cat(&rows, 2)
            }
        };
        let out = products.linear(&self.out_proj, &merge_heads(&context));
        (out, KvCache::new(k, v, window))
    }
    // ANCHOR_END: forward

    /// Attention for one new token at `position`: its key, already rotated, and its value
    /// appended to the cache (which drops the oldest beyond a local layer's window), its
    /// query against every cached key. Returns its output and its attention weights.
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
        let (q, k, v) = self.qkv(x_new, &[position], recipe, Products::Batched);
        cache.append(&k, &v);
        let weights = self.weights(&q, &cache.keys, recipe, None);
        let context = weights.matmul(&repeat_kv(&cache.values, self.n_rep()));
        (self.out_proj.forward(&merge_heads(&context)), weights)
    }
    // ANCHOR_END: step
}

/// The first key query `i` sees: `0`, or `i - w + 1` once a window of `w` is full.
pub fn first_visible(i: usize, window: Option<usize>) -> usize {
    match window {
        None => 0,
        Some(w) => (i + 1).saturating_sub(w),
    }
}
