//! How far the model is from copying, and what its heads do, as three numbers.
//!
//! - The repeated-token loss: the mean `−log p` of the repeat's tokens, its first token left
//!   out (nothing before it says what it is). Guessing gives `ln 24 ≈ 3.18`; a model that
//!   copies gets near 0.
//! - A layer-0 head's previous-token score: its mean weight from position `i` to `i − 1`.
//! - A layer-1 head's induction score: its mean weight from a query `i` in the repeat to
//!   `i − k + 1`, the token after the earlier occurrence of token `i`.
//!
//! The means are taken in f64 from the float32 weights and log-probabilities.

use shared::Tensor;

use crate::data::{Batch, TOKENS};
use crate::model::{AttentionOnly, HEADS, Head};

/// The three scores of a model on a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// The mean `−log p` of the repeated tokens (first one of each repeat left out).
    pub repeat_loss: f64,
    /// Per layer-0 head: mean weight on the previous position.
    pub previous: [f64; HEADS],
    /// Per layer-1 head: mean weight on the token after the earlier occurrence.
    pub induction: [f64; HEADS],
}

/// The scores of `model` on `batch`, with `ablate = Some((layer, head))` zeroing one head.
///
/// # Shapes
/// `batch.ids`: `[n, TOKENS]`.
// ANCHOR: scores
pub fn scores(model: &AttentionOnly, batch: &Batch, ablate: Option<Head>) -> Scores {
    let (logits, tape) = model.forward_with_tape(&batch.ids, ablate);
    let log_probs = logits.log_softmax(-1);
    let vocab = log_probs.size(-1);
    let (log_probs, ids) = (log_probs.to_vec(), batch.ids.to_vec());
    let w0 = tape.blocks[0].attention.weights.to_vec();
    let w1 = tape.blocks[1].attention.weights.to_vec();
    // weights[b, h, q, key] in the flat [n, HEADS, TOKENS, TOKENS] buffer
    let at = |w: &[f32], b: usize, h: usize, q: usize, key: usize| {
        f64::from(w[((b * HEADS + h) * TOKENS + q) * TOKENS + key])
    };
    let (mut loss, mut count) = (0.0, 0);
    let mut induction = [0.0; HEADS];
    for (b, &k) in batch.ks.iter().enumerate() {
        for target in TOKENS - k + 1..TOKENS {
            let id = ids[b * TOKENS + target] as usize;
            loss -= f64::from(log_probs[(b * TOKENS + target - 1) * vocab + id]);
            count += 1;
        }
        for (h, score) in induction.iter_mut().enumerate() {
            let on_next: f64 = (TOKENS - k..TOKENS)
                .map(|q| at(&w1, b, h, q, q + 1 - k))
                .sum();
            *score += on_next / k as f64;
        }
    }
    let n = batch.ks.len();
    let mut previous = [0.0; HEADS];
    for (h, score) in previous.iter_mut().enumerate() {
        let sum: f64 = (0..n)
            .flat_map(|b| (1..TOKENS).map(move |i| (b, i)))
            .map(|(b, i)| at(&w0, b, h, i, i - 1))
            .sum();
        *score = sum / (n * (TOKENS - 1)) as f64;
    }
    Scores {
        repeat_loss: loss / f64::from(count),
        previous,
        induction: induction.map(|s| s / n as f64),
    }
}
// ANCHOR_END: scores

/// The attention weights of one layer, `[n, HEADS, TOKENS, TOKENS]`.
///
/// # Shapes
/// `ids`: `[n, TOKENS]`.
pub fn attention_weights(
    model: &AttentionOnly,
    ids: &Tensor<i64>,
    layer: usize,
) -> Tensor {
    let (_, tape) = model.forward_with_tape(ids, None);
    tape.blocks[layer].attention.weights.clone()
}

/// Each head's mean weight from a query `i` to the key `i − offset`, over every sequence and
/// every query from `first_query` on, for weights of any number of heads and tokens: the
/// previous-token score with `offset = 1`; the induction score on a sequence repeated after
/// `n` tokens with `offset = n − 1`, the queries of the repeat. Chapter 20 scores a real
/// model's 270 heads with it.
///
/// # Shapes
/// `weights`: `[n, heads, tokens, tokens]`, `offset <= first_query < tokens`. Returns one
/// score per head.
// ANCHOR: mean_weight_at_offset
pub fn mean_weight_at_offset(
    weights: &Tensor,
    offset: usize,
    first_query: usize,
) -> Vec<f64> {
    let [n, heads, tokens, _] = weights.sizes()[..] else {
        panic!("mean_weight_at_offset: weights must be [n, heads, tokens, tokens]");
    };
    let w = weights.to_vec();
    (0..heads)
        .map(|h| {
            let sum: f64 = (0..n)
                .flat_map(|b| (first_query..tokens).map(move |i| (b, i)))
                .map(|(b, i)| {
                    f64::from(w[((b * heads + h) * tokens + i) * tokens + i - offset])
                })
                .sum();
            sum / (n * (tokens - first_query)) as f64
        })
        .collect()
}
// ANCHOR_END: mean_weight_at_offset
