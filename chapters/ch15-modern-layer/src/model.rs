//! A tiny model of 2026 layers, and greedy decoding with a KV cache of rotated keys.
//!
//! Token ids → embeddings → layers → a final RMSNorm → a linear head: one logit per
//! vocabulary entry. No position embedding: the positions live in the rotations of the
//! queries and keys. That is what makes the cache simple: a key is rotated once, by its
//! own absolute position, when its token arrives, and stored rotated; a later query
//! rotated by its own position then scores it by their distance alone. A local layer's
//! cache keeps the last `window` keys, a rolling buffer, and positions still count from
//! the first token of the sequence.

use ch14_generation::KvCache;
use shared::nn::{Embedding, Linear, RMSNorm};
use shared::{Tensor, cat, stack};

use crate::attention::EPS;
use crate::layer::Layer;
use crate::recipe::Recipe;
use crate::sampling::{Sampler, next_token_probs};

/// The sizes of a [`TinyModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// Token ids are `0..vocab_size`.
    pub vocab_size: usize,
    /// The width of the residual stream.
    pub d_model: usize,
    /// Layers.
    pub n_layers: usize,
    /// Query heads per layer.
    pub n_heads: usize,
    /// Key/value heads per layer.
    pub n_kv_heads: usize,
    /// The feed-forward network's inner width.
    pub d_ff: usize,
}

/// Embeddings, layers, a final norm and a vocabulary head.
// ANCHOR: model_struct
pub struct TinyModel {
    /// `[vocab_size, d_model]`.
    pub tok_emb: Embedding,
    /// The layers, first to last.
    pub layers: Vec<Layer>,
    /// The RMSNorm before the head.
    pub final_norm: RMSNorm,
    /// `[vocab_size, d_model]`, no bias.
    pub lm_head: Linear,
}
// ANCHOR_END: model_struct

/// A model's output over a sequence: the logits and one cache per layer.
pub type Forward = (Tensor, Vec<KvCache>);

/// A forward pass over a whole sequence, as the generations take it: [`TinyModel::forward`]
/// or its batch-invariant twin, [`TinyModel::forward_row_by_row`].
pub type ForwardPass = fn(&TinyModel, &Tensor<i64>, &Recipe) -> Forward;

impl TinyModel {
    /// Draws the parameters from the default generator: the embedding (normal), each
    /// layer's, then the head.
    ///
    /// # Shapes
    /// Token ids `[batch, tokens]`.
    pub fn new(config: ModelConfig) -> TinyModel {
        let ModelConfig {
            vocab_size,
            d_model,
            n_layers,
            n_heads,
            n_kv_heads,
            d_ff,
        } = config;
        TinyModel {
            tok_emb: Embedding::new(vocab_size, d_model),
            layers: (0..n_layers)
                .map(|_| Layer::new(d_model, n_heads, n_kv_heads, d_ff))
                .collect(),
            final_norm: RMSNorm::with_options(&[d_model], Some(EPS), true),
            lm_head: Linear::new(d_model, vocab_size, false),
        }
    }

    /// The logits of every position, and every layer's cache.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    // ANCHOR: model_forward
    pub fn forward(&self, ids: &Tensor<i64>, recipe: &Recipe) -> Forward {
        let (x, caches) = self.through_layers(ids, recipe, Layer::forward);
        (self.lm_head.forward(&x), caches)
    }
    // ANCHOR_END: model_forward

    /// The tokens' embeddings through every layer, each run by `layer` ([`Layer::forward`]
    /// or its batch-invariant twin), then the final norm; and every layer's cache.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, d_model]`.
    pub fn through_layers(
        &self,
        ids: &Tensor<i64>,
        recipe: &Recipe,
        layer: fn(&Layer, &Tensor, &Recipe, Option<usize>) -> (Tensor, KvCache),
    ) -> (Tensor, Vec<KvCache>) {
        let mut x = self.tok_emb.forward(ids);
        let mut caches = Vec::with_capacity(self.layers.len());
        for (i, each) in self.layers.iter().enumerate() {
            let cache;
            (x, cache) = layer(each, &x, recipe, recipe.window_of(i));
            caches.push(cache);
        }
        (self.final_norm.forward(&x), caches)
    }

    /// The logits of one new token at `position`, using and extending every layer's cache.
    ///
    /// # Shapes
    /// `token`: `[batch, 1]`. Returns `[batch, vocab_size]`.
    // ANCHOR: model_step
    pub fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        caches: &mut [KvCache],
        recipe: &Recipe,
    ) -> Tensor {
        let mut x = self.tok_emb.forward(token);
        for (layer, cache) in self.layers.iter().zip(caches.iter_mut()) {
            x = layer.step(&x, position, cache, recipe);
        }
        self.lm_head
            .forward(&self.final_norm.forward(&x))
            .select(1, -1)
    }
    // ANCHOR_END: model_step
}

/// The tokens and logits of a greedy generation.
#[derive(Clone, Debug)]
pub struct Generation {
    /// `[batch, prompt + n_new]`: the prompt and the generated tokens.
    pub ids: Tensor<i64>,
    /// `[n_new · batch, vocab_size]`: the logits each new token was picked from.
    pub logits: Tensor,
    /// Every layer's cache at the end (a cached generation only).
    pub caches: Vec<KvCache>,
}

/// Recomputes the whole sequence with `forward` for each of `n_new` tokens, picking the
/// likeliest.
///
/// # Shapes
/// `prompt`: `[batch, tokens]`.
pub fn generate_recomputing(
    model: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    recipe: &Recipe,
    forward: ForwardPass,
) -> Generation {
    let mut ids = prompt.clone();
    let mut steps = Vec::new();
    for _ in 0..n_new {
        let (logits, _) = forward(model, &ids, recipe);
        let last = logits.select(1, -1);
        ids = cat(&[&ids, &last.argmax_dim(-1, true)], 1);
        steps.push(last);
    }
    Generation {
        ids,
        logits: cat(&steps, 0),
        caches: Vec::new(),
    }
}

/// Runs the prompt once with `forward` (filling the caches), then one token at a time with
/// the caches.
///
/// # Shapes
/// `prompt`: `[batch, tokens]`.
// ANCHOR: generate_cached
pub fn generate_cached(
    model: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    recipe: &Recipe,
    forward: ForwardPass,
) -> Generation {
    let (logits, mut caches) = forward(model, prompt, recipe); // the prefill
    let mut last = logits.select(1, -1);
    let mut ids = cat(&[prompt, &last.argmax_dim(-1, true)], 1);
    let mut steps = vec![last];
    for _ in 1..n_new {
        let position = ids.size(1) - 1; // absolute, also on local layers
        last = model.step(&ids.narrow(1, position, 1), position, &mut caches, recipe);
        ids = cat(&[&ids, &last.argmax_dim(-1, true)], 1);
        steps.push(last);
    }
    Generation {
        ids,
        logits: cat(&steps, 0),
        caches,
    }
}
// ANCHOR_END: generate_cached

/// The generation of [`generate_cached`], each new token drawn from the default generator
/// with `multinomial` from the probabilities of `sampler` instead of picked greedily.
///
/// # Shapes
/// `prompt`: `[batch, tokens]`.
// ANCHOR: generate_sampled
pub fn generate_sampled(
    model: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    recipe: &Recipe,
    sampler: &Sampler,
) -> Generation {
    let (logits, mut caches) = model.forward(prompt, recipe);
    let mut last = logits.select(1, -1);
    let mut ids = cat(&[prompt, &draw(&last, prompt, sampler)], 1);
    let mut steps = vec![last];
    for _ in 1..n_new {
        let position = ids.size(1) - 1;
        last = model.step(&ids.narrow(1, position, 1), position, &mut caches, recipe);
        ids = cat(&[&ids, &draw(&last, &ids, sampler)], 1);
        steps.push(last);
    }
    Generation {
        ids,
        logits: cat(&steps, 0),
        caches,
    }
}

/// One token per row of `logits`, drawn from [`next_token_probs`]; the tokens seen
/// are the row's `ids` so far.
///
/// # Shapes
/// `logits`: `[batch, vocab]`, `ids`: `[batch, tokens]`. Returns `[batch, 1]`.
fn draw(logits: &Tensor, ids: &Tensor<i64>, sampler: &Sampler) -> Tensor<i64> {
    let probs: Vec<Tensor> = (0..logits.size(0))
        .map(|b| next_token_probs(&logits.get(b), &ids.get(b).to_vec(), sampler))
        .collect();
    stack(&probs, 0).multinomial(1, false)
}
// ANCHOR_END: generate_sampled
