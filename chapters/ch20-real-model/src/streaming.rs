//! Perplexity, and StreamingLLM's experiment on the real model (Xiao et al., 2023,
//! "Efficient Streaming Language Models with Attention Sinks").
//!
//! A model that reads past its window must evict keys from its cache. Chapter 15's local
//! layers say which: query `i` sees the last `window` keys, and StreamingLLM's first
//! `sink_tokens` keys beside them ([`sees`](ch15_modern_layer::attention::sees)). Making
//! every one of the model's layers such a local layer and scoring a text shows what the
//! evicted keys were worth: the first token, which holds so much of most layers'
//! attention, turns out to matter far more than its words.
//!
//! The keys keep their positions in the text (chapter 15's cache stores them rotated by
//! their own positions). StreamingLLM instead numbers the cached keys from 0 inside the
//! cache, so that a stream of any length stays within the positions the model was trained
//! on; the paragraph here is far shorter than SmolLM2's 8192 positions, and inside the
//! window both numberings give every key the same distance to the query: only the sinks'
//! distances differ.

use std::ops::Range;

use ch15_modern_layer::{Recipe, TinyModel};
use shared::Tensor;

/// `recipe` with every one of `n_layers` layers local: a window of `window` keys and
/// `sink_tokens` sink tokens kept beside it.
// ANCHOR: streaming_recipe
pub fn streaming_recipe(
    recipe: &Recipe,
    n_layers: usize,
    window: usize,
    sink_tokens: usize,
) -> Recipe {
    Recipe {
        window,
        sink_tokens,
        // n_layers local layers before the first global one: none of them is global.
        local_per_global: Some(n_layers),
        ..*recipe
    }
}
// ANCHOR_END: streaming_recipe

/// The mean loss (`−log p` of the next token, in nats) of the predictions made at the
/// positions `at`, over every sequence: position `t` predicts token `t + 1`.
///
/// # Shapes
/// `logits`: `[batch, tokens, vocab]`, `ids`: `[batch, tokens]`; `at` within `0..tokens - 1`.
// ANCHOR: mean_loss
pub fn mean_loss(logits: &Tensor, ids: &Tensor<i64>, at: Range<usize>) -> f64 {
    let log_probs = logits.log_softmax(-1);
    let [batch, tokens, vocab] = log_probs.dims();
    let (lp, id) = (log_probs.to_vec(), ids.to_vec());
    let mut sum = 0.0;
    for b in 0..batch {
        for t in at.clone() {
            let next = id[b * tokens + t + 1] as usize;
            sum -= f64::from(lp[(b * tokens + t) * vocab + next]);
        }
    }
    sum / (batch * at.len()) as f64
}
// ANCHOR_END: mean_loss

/// The perplexity of the predictions at positions `at` of `ids` under `recipe`:
/// `exp(mean loss)`, the number of tokens the model is as unsure as a uniform choice among.
///
/// # Shapes
/// `ids`: `[batch, tokens]`.
pub fn perplexity(
    model: &TinyModel,
    ids: &Tensor<i64>,
    recipe: &Recipe,
    at: Range<usize>,
) -> f64 {
    let (logits, _) = model.forward(ids, recipe);
    mean_loss(&logits, ids, at).exp()
}
