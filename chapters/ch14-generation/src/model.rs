//! A tiny decoder-only language model around grouped-query attention.
//!
//! Token ids → token embedding + position embedding → one causal attention layer with a
//! residual connection (`h = x + attention(x)`) → a linear head that gives one logit per
//! vocabulary entry. Real models stack many such layers, each with a feed-forward network
//! and normalisation (chapter 13's block); one layer with random weights is enough to watch
//! the cache at work, because every layer caches its keys and values in the same way.

use shared::nn::{Embedding, Linear};
use shared::{Tensor, arange};

use crate::attention::GroupedQueryAttention;
use crate::kv_cache::KvCache;

/// The sizes of a [`TinyDecoder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecoderConfig {
    /// Token ids are `0..vocab_size`.
    pub vocab_size: usize,
    /// Positions are `0..context_length`.
    pub context_length: usize,
    /// The width of every token's vector.
    pub d_model: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads (`n_heads` for multi-head attention, 1 for multi-query).
    pub n_kv_heads: usize,
    /// A sliding window in tokens, or `None` for plain causal attention.
    pub window: Option<usize>,
}

/// Embeddings, one grouped-query attention layer with a residual, and a vocabulary head.
// ANCHOR: decoder_struct
pub struct TinyDecoder {
    /// `[vocab_size, d_model]`.
    pub tok_emb: Embedding,
    /// `[context_length, d_model]`: one learned vector per position.
    pub pos_emb: Embedding,
    /// The attention layer.
    pub attn: GroupedQueryAttention,
    /// `[vocab_size, d_model]`, no bias: the logits.
    pub lm_head: Linear,
}
// ANCHOR_END: decoder_struct

/// A forward pass over a whole sequence, as the generations take it:
/// [`TinyDecoder::forward`] or its batch-invariant twin, [`TinyDecoder::forward_row_by_row`].
pub type ForwardPass = fn(&TinyDecoder, &Tensor<i64>) -> (Tensor, KvCache);

impl TinyDecoder {
    /// Draws the parameters from the default generator in this order: the two embeddings
    /// (normal), the attention's four `Linear`s, then the head (uniform, as `nn.Linear`).
    ///
    /// # Shapes
    /// Token ids `[batch, tokens]` with `tokens <= context_length`.
    pub fn new(config: DecoderConfig) -> TinyDecoder {
        TinyDecoder {
            tok_emb: Embedding::new(config.vocab_size, config.d_model),
            pos_emb: Embedding::new(config.context_length, config.d_model),
            attn: GroupedQueryAttention::new(
                config.d_model,
                config.n_heads,
                config.n_kv_heads,
                config.window,
            ),
            lm_head: Linear::new(config.d_model, config.vocab_size, false),
        }
    }

    /// Token embeddings plus the embeddings of positions `start, start + 1, ...`.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, d_model]`.
    pub fn embed(&self, ids: &Tensor<i64>, start: usize) -> Tensor {
        let positions = arange(start, start + ids.size(1), 1);
        self.tok_emb.forward(ids) + self.pos_emb.forward(&positions)
    }

    /// The logits of every position, and the cache of keys and values it leaves.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    // ANCHOR: decoder_forward
    pub fn forward(&self, ids: &Tensor<i64>) -> (Tensor, KvCache) {
        let x = self.embed(ids, 0);
        let (out, cache) = self.attn.forward(&x);
        (self.lm_head.forward(&(x + out)), cache)
    }
    // ANCHOR_END: decoder_forward

    /// One new token at `position`, using and extending the cache: its logits and its
    /// attention weights.
    ///
    /// # Shapes
    /// `token`: `[batch, 1]`. Returns `[batch, vocab_size]` and `[batch, n_heads, 1, cached]`.
    // ANCHOR: decoder_step
    pub fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        cache: &mut KvCache,
    ) -> (Tensor, Tensor) {
        let x = self.embed(token, position);
        let (out, weights) = self.attn.step(&x, cache);
        (self.lm_head.forward(&(x + out)).select(1, -1), weights)
    }
    // ANCHOR_END: decoder_step
}
