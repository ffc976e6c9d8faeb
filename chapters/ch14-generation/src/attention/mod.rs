//! Grouped-query causal attention over a whole sequence, with an optional sliding window.
//!
//! Chapter 7's `MultiHeadAttention` with two changes: the key and value projections are
//! `n_kv_heads · head_dim` wide instead of `n_heads · head_dim` (their heads are shared by
//! groups of query heads, see [`repeat_kv`]), and the mask may also hide the keys outside
//! a sliding window (see [`sliding_window_mask`]). With `n_kv_heads = n_heads` and no
//! window it computes exactly what chapter 7 computes.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use shared::Tensor;
use shared::nn::Linear;

use crate::gqa::repeat_kv;
use crate::kv_cache::KvCache;
use crate::window::sliding_window_mask;

#[cfg_attr(feature = "exercise", path = "../../exercises/decode_step.rs")]
mod decode_step;

/// Causal attention whose `n_heads` query heads share `n_kv_heads` key/value heads.
// ANCHOR: gqa_struct
pub struct GroupedQueryAttention {
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads; `n_heads` is a multiple of it.
    pub n_kv_heads: usize,
    /// Features per head, `d_model / n_heads`.
    pub head_dim: usize,
    /// With `Some(w)`, query `i` sees only the keys `i - w < j <= i`.
    pub window: Option<usize>,
    /// `[n_heads · head_dim, d_model]`, no bias.
    pub w_query: Linear,
    /// `[n_kv_heads · head_dim, d_model]`, no bias: the keys of the shared heads.
    pub w_key: Linear,
    /// `[n_kv_heads · head_dim, d_model]`, no bias.
    pub w_value: Linear,
    /// `[d_model, d_model]`, with bias: mixes the heads.
    pub out_proj: Linear,
}
// ANCHOR_END: gqa_struct

impl GroupedQueryAttention {
    /// Draws `W_query`, `W_key`, `W_value` (no bias) and `out_proj` (with bias), in that
    /// order, from the default generator, as `nn.Linear` does.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    ///
    /// # Panics
    /// If `d_model` is not a multiple of `n_heads`, `n_heads` not a multiple of
    /// `n_kv_heads`, or the window is 0 tokens.
    pub fn new(
        d_model: usize,
        n_heads: usize,
        n_kv_heads: usize,
        window: Option<usize>,
    ) -> GroupedQueryAttention {
        assert!(
            n_heads > 0 && d_model.is_multiple_of(n_heads),
            "grouped-query attention: d_model ({d_model}) must be a multiple of n_heads ({n_heads})"
        );
        assert!(
            n_kv_heads > 0 && n_heads.is_multiple_of(n_kv_heads),
            "grouped-query attention: n_heads ({n_heads}) must be a multiple of n_kv_heads \
             ({n_kv_heads})"
        );
        assert!(
            window != Some(0),
            "grouped-query attention: a window must hold at least one token"
        );
        let head_dim = d_model / n_heads;
        GroupedQueryAttention {
            n_heads,
            n_kv_heads,
            head_dim,
            window,
            w_query: Linear::new(d_model, n_heads * head_dim, false),
            w_key: Linear::new(d_model, n_kv_heads * head_dim, false),
            w_value: Linear::new(d_model, n_kv_heads * head_dim, false),
            out_proj: Linear::new(d_model, d_model, true),
        }
    }

    /// How many query heads read each key/value head.
    pub fn n_rep(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// The attention weights of queries over keys, `softmax(q·kᵀ/√head_dim)`, the key heads
    /// repeated for their query heads; `hidden` marks the keys to leave out.
    ///
    /// # Shapes
    /// `q`: `[batch, n_heads, queries, head_dim]`, `k`: `[batch, n_kv_heads, keys, head_dim]`,
    /// `hidden`: broadcasts to `[queries, keys]`. Returns `[batch, n_heads, queries, keys]`.
    // ANCHOR: weights
    pub fn weights(
        &self,
        q: &Tensor,
        k: &Tensor,
        hidden: Option<&Tensor<bool>>,
    ) -> Tensor {
        let mut scores = q.matmul(&repeat_kv(k, self.n_rep()).transpose(2, 3));
        if let Some(hidden) = hidden {
            scores.masked_fill_(hidden, f32::NEG_INFINITY);
        }
        (&scores / (self.head_dim as f32).sqrt()).softmax(-1)
    }
    // ANCHOR_END: weights

    /// Attention over a whole sequence: every token's output, and the keys and values a
    /// cache would hold after it. One product per projection and per head, the future (and
    /// the keys outside the window) masked.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]` and a cache of
    /// `[batch, n_kv_heads, min(tokens, window), head_dim]` keys and values.
    // ANCHOR: forward
    pub fn forward(&self, x: &Tensor) -> (Tensor, KvCache) {
        let q = split_heads(&self.w_query.forward(x), self.n_heads);
        let k = split_heads(&self.w_key.forward(x), self.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x), self.n_kv_heads);
        let hidden = sliding_window_mask(x.size(1), self.window);
        let weights = self.weights(&q, &k, Some(&hidden));
        let context = weights.matmul(&repeat_kv(&v, self.n_rep()));
        let out = self.out_proj.forward(&merge_heads(&context));
        (out, KvCache::new(k, v, self.window))
    }
    // ANCHOR_END: forward
}
