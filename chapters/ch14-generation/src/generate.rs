//! Greedy decoding: append the most likely next token, again and again.
//!
//! Recomputing runs the model on the whole sequence for every new token and keeps only the
//! last position's logits: step `s` of a sequence of `t` tokens projects all `t` tokens
//! again. With a cache the prompt is run once (the *prefill*, which fills the cache) and
//! every later step runs the model on the one new token.

use shared::{Tensor, cat, zeros};

use crate::kv_cache::KvCache;
use crate::model::{ForwardPass, TinyDecoder};

/// What a generation produced.
#[derive(Clone, Debug)]
pub struct Generation {
    /// `[batch, prompt + new]`: the prompt and the generated tokens.
    pub ids: Tensor<i64>,
    /// `[new · batch, vocab_size]`: the logits each new token was chosen from, in order.
    pub logits: Tensor,
    /// With a cache: each step's attention weights after the prefill,
    /// `[batch, n_heads, 1, cached]`; empty when recomputing.
    pub weights: Vec<Tensor>,
    /// With a cache: the cache at the end.
    pub cache: Option<KvCache>,
}

impl Generation {
    /// What each token fed after the prefill attended to, in head `head` of sequence 0:
    /// row `s` holds the weights of the token at position `prompt + s` (the `s`-th new
    /// one) over the positions up to it, 0 where a position is not in the cache (after
    /// it, or slid out of the window). The last new token is never fed, so there is one
    /// row less than new tokens. No rows without a cache.
    ///
    /// # Shapes
    /// Returns `[new - 1, prompt + new - 1]` (`[0, tokens]` when recomputing).
    pub fn weight_rows(&self, head: usize) -> Tensor {
        let steps = self.weights.len();
        if steps == 0 {
            return zeros(&[0, self.ids.size(1)]);
        }
        // Every generated token but the last was fed once, after the prompt.
        let positions = self.ids.size(1) - 1;
        let first = positions - steps;
        let mut grid = zeros(&[steps, positions]);
        for (s, weights) in self.weights.iter().enumerate() {
            // The cache holds the positions up to this token's, the oldest dropped first.
            let row = weights.select(0, 0).select(0, head).view(&[-1]); // [cached]
            let start = first + s + 1 - row.size(0);
            for (j, w) in row.to_vec().into_iter().enumerate() {
                grid.set(&[s, start + j], w);
            }
        }
        grid
    }
}

/// The most likely next token of each sequence.
///
/// # Shapes
/// `logits`: `[batch, vocab_size]`. Returns `[batch, 1]`.
pub fn greedy(logits: &Tensor) -> Tensor<i64> {
    logits.argmax_dim(-1, true)
}

/// Greedy decoding of `n_new` tokens, running the model on the whole sequence each time
/// with `forward`.
///
/// # Shapes
/// `prompt`: `[batch, tokens]`. Returns ids `[batch, tokens + n_new]`.
// ANCHOR: generate_recomputing
pub fn generate_recomputing(
    model: &TinyDecoder,
    prompt: &Tensor<i64>,
    n_new: usize,
    forward: ForwardPass,
) -> Generation {
    let mut ids = prompt.clone();
    let mut all_logits = Vec::new();
    for _ in 0..n_new {
        let (logits, _) = forward(model, &ids);
        let last = logits.select(1, -1); // [batch, vocab]: the last position only
        ids = cat(&[&ids, &greedy(&last)], 1);
        all_logits.push(last);
    }
    Generation {
        ids,
        logits: cat(&all_logits, 0),
        weights: Vec::new(),
        cache: None,
    }
}
// ANCHOR_END: generate_recomputing

/// Greedy decoding of `n_new` tokens with a KV cache: the prompt once with `forward`, then
/// one token per step.
///
/// # Shapes
/// `prompt`: `[batch, tokens]` with `n_new >= 1`. Returns ids `[batch, tokens + n_new]`.
// ANCHOR: generate_cached
pub fn generate_cached(
    model: &TinyDecoder,
    prompt: &Tensor<i64>,
    n_new: usize,
    forward: ForwardPass,
) -> Generation {
    let (logits, mut cache) = forward(model, prompt); // the prefill
    let mut last = logits.select(1, -1);
    let mut ids = cat(&[prompt, &greedy(&last)], 1);
    let mut all_logits = vec![last];
    let mut all_weights = Vec::new();
    for _ in 1..n_new {
        let position = ids.size(1) - 1;
        let token = ids.narrow(1, position, 1);
        let weights;
        (last, weights) = model.step(&token, position, &mut cache);
        ids = cat(&[&ids, &greedy(&last)], 1);
        all_logits.push(last);
        all_weights.push(weights);
    }
    Generation {
        ids,
        logits: cat(&all_logits, 0),
        weights: all_weights,
        cache: Some(cache),
    }
}
// ANCHOR_END: generate_cached
