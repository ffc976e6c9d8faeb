//! What happens to the logits before a token is drawn.
//!
//! Greedy decoding always takes the likeliest token; sampling draws one from the softmax's
//! probabilities, after reshaping them. Each function below returns the probabilities a
//! draw would use (a token left out gets exactly 0); [`crate::top_p`] has nucleus sampling.
//!
//! - temperature `τ`: `softmax(logits / τ)`, sharper below 1, flatter above;
//! - top-k: only the `k` likeliest tokens stay;
//! - min-p: only tokens at least `p_base` times as likely as the likeliest stay;
//! - repetition penalty (Keskar et al., 2019, "CTRL"): the logits of tokens already in the
//!   sequence are pushed down, a positive one divided by the penalty, a negative one
//!   multiplied.

use shared::Tensor;

/// `softmax(logits / τ)`.
///
/// # Shapes
/// `logits`: `[vocab]`. Returns `[vocab]`.
// ANCHOR: temperature
pub fn with_temperature(logits: &Tensor, tau: f32) -> Tensor {
    (logits / tau).softmax(-1)
}
// ANCHOR_END: temperature

/// The softmax over the `k` largest logits (and any tied with the `k`-th), the others 0.
///
/// # Shapes
/// `logits`: `[vocab]`, `1 <= k <= vocab`. Returns `[vocab]`.
///
/// # Panics
/// If `k` is 0 or larger than the vocabulary.
// ANCHOR: top_k
pub fn top_k(logits: &Tensor, k: usize) -> Tensor {
    let vocab = logits.numel();
    assert!(
        (1..=vocab).contains(&k),
        "top_k: k ({k}) must be between 1 and the vocabulary size ({vocab})"
    );
    let mut sorted = logits.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a)); // largest first
    let kth = sorted[k - 1];
    logits
        .masked_fill(&below(logits, kth), f32::NEG_INFINITY)
        .softmax(-1)
}
// ANCHOR_END: top_k

/// The softmax over the tokens whose probability is at least `p_base` times the
/// largest, the others 0.
///
/// # Shapes
/// `logits`: `[vocab]`. Returns `[vocab]`.
// ANCHOR: min_p
pub fn min_p(logits: &Tensor, p_base: f32) -> Tensor {
    let probs = logits.softmax(-1);
    let threshold = p_base * probs.max().item();
    logits
        .masked_fill(&below(&probs, threshold), f32::NEG_INFINITY)
        .softmax(-1)
}
// ANCHOR_END: min_p

/// The logits with those of the `seen` tokens pushed down: divided by `penalty` where
/// positive, multiplied by it where negative.
///
/// # Shapes
/// `logits`: `[vocab]`; every seen id below `vocab`. Returns `[vocab]`.
// ANCHOR: repetition_penalty
pub fn repetition_penalty(logits: &Tensor, seen: &[i64], penalty: f32) -> Tensor {
    let mut values = logits.to_vec();
    for &token in seen {
        let v = &mut values[token as usize];
        *v = if *v < 0.0 { *v * penalty } else { *v / penalty };
    }
    Tensor::from_vec(values, logits.dims())
}
// ANCHOR_END: repetition_penalty

/// The tokens a distribution keeps (probability above 0) and their probabilities.
///
/// # Shapes
/// `probs`: `[vocab]`. Returns the ids and a `[kept]` tensor.
pub fn kept(probs: &Tensor) -> (Vec<i64>, Tensor) {
    let (ids, values): (Vec<i64>, Vec<f32>) = probs
        .to_vec()
        .into_iter()
        .enumerate()
        .filter(|&(_, p)| p > 0.0)
        .map(|(i, p)| (i as i64, p))
        .unzip();
    let n = values.len();
    (ids, Tensor::from_vec(values, &[n]))
}

/// `t < value`, elementwise: a mask of the entries below `value`.
///
/// # Shapes
/// Any shape; unchanged.
pub fn below(t: &Tensor, value: f32) -> Tensor<bool> {
    let mask = t.to_vec().into_iter().map(|v| v < value).collect();
    Tensor::from_vec(mask, t.dims())
}
