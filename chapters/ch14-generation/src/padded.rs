//! A batch of prompts of different lengths, decoded together.
//!
//! A batch is one rectangle of token ids, so the shorter prompts are padded. Padding on
//! the *left* makes every prompt end in the last column: the next token of every row is
//! then read from the same place, and every step appends one column. Three things keep each
//! row equal to that prompt decoded alone:
//! - a padding mask, `true` at the padding, that hides the padded keys from every query
//!   (chapter 13's `hide_padded_keys`), in the prefill and in every step;
//! - each row's own positions: a row's first real token is at position 0, however much
//!   padding comes before it;
//! - the padded queries' outputs are thrown away (they see no key at all, so their
//!   weights are NaN, as chapter 13 showed; nothing real reads them).
//!
//! The methods here are those of the cached decoding with a padding mask and explicit
//! positions; `generate_left_padded` (an exercise) uses them.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use shared::Tensor;

use crate::attention::GroupedQueryAttention;
use crate::gqa::repeat_kv;
use crate::kv_cache::KvCache;
use crate::model::TinyDecoder;
use crate::window::sliding_window_mask;

/// `pad[:, None, None, :]`: hides the padded keys from every head and query.
fn hide_keys(pad: &Tensor<bool>) -> Tensor<bool> {
    pad.unsqueeze(1).unsqueeze(1)
}

impl GroupedQueryAttention {
    /// Attention over a padded batch: causal (and windowed), the padded keys hidden.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`, `pad`: `[batch, tokens]` (`true` at padding).
    /// Returns `[batch, tokens, d_model]` and the cache of the last `min(tokens, window)`
    /// tokens.
    pub fn forward_padded(
        &self,
        x: &Tensor,
        pad: &Tensor<bool>,
    ) -> (Tensor, KvCache) {
        let q = split_heads(&self.w_query.forward(x), self.n_heads);
        let k = split_heads(&self.w_key.forward(x), self.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x), self.n_kv_heads);
        let hidden = &sliding_window_mask(x.size(1), self.window) | &hide_keys(pad);
        let weights = self.weights(&q, &k, Some(&hidden));
        let context = weights.matmul(&repeat_kv(&v, self.n_rep()));
        let out = self.out_proj.forward(&merge_heads(&context));
        (out, KvCache::new(k, v, self.window))
    }

    /// One new token per row with the cache, the padded keys still hidden.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`; `pad`: `[batch, tokens]`, the padding of the whole
    /// sequence including the new token (the cache holds its last `cached` columns).
    /// Returns `[batch, 1, d_model]`.
    pub fn step_padded(
        &self,
        x_new: &Tensor,
        cache: &mut KvCache,
        pad: &Tensor<bool>,
    ) -> Tensor {
        let q = split_heads(&self.w_query.forward(x_new), self.n_heads);
        let k = split_heads(&self.w_key.forward(x_new), self.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x_new), self.n_kv_heads);
        cache.append(&k, &v);
        let cached = pad.narrow(1, pad.size(1) - cache.len(), cache.len()); // [b, cached]
        let weights = self.weights(&q, &cache.keys, Some(&hide_keys(&cached)));
        let context = weights.matmul(&repeat_kv(&cache.values, self.n_rep()));
        self.out_proj.forward(&merge_heads(&context))
    }
}

impl TinyDecoder {
    /// Token embeddings plus the embeddings of each token's own position.
    ///
    /// # Shapes
    /// `ids`, `positions`: `[batch, tokens]`. Returns `[batch, tokens, d_model]`.
    pub fn embed_at(&self, ids: &Tensor<i64>, positions: &Tensor<i64>) -> Tensor {
        self.tok_emb.forward(ids) + self.pos_emb.forward(positions)
    }

    /// The prefill of a padded batch: the logits of every position and the cache.
    ///
    /// # Shapes
    /// `ids`, `positions`, `pad`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    pub fn forward_padded(
        &self,
        ids: &Tensor<i64>,
        positions: &Tensor<i64>,
        pad: &Tensor<bool>,
    ) -> (Tensor, KvCache) {
        let x = self.embed_at(ids, positions);
        let (out, cache) = self.attn.forward_padded(&x, pad);
        (self.lm_head.forward(&(x + out)), cache)
    }

    /// One new token per row at that row's own position, using and extending the cache.
    ///
    /// # Shapes
    /// `token`, `position`: `[batch, 1]`; `pad`: `[batch, tokens]` including the new
    /// token's column. Returns the logits `[batch, vocab_size]`.
    pub fn step_padded(
        &self,
        token: &Tensor<i64>,
        position: &Tensor<i64>,
        pad: &Tensor<bool>,
        cache: &mut KvCache,
    ) -> Tensor {
        let x = self.embed_at(token, position);
        let out = self.attn.step_padded(&x, cache, pad);
        self.lm_head.forward(&(x + out)).select(1, -1)
    }
}
