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
//!
//! A [`Sampler`] chains them: the penalty, the temperature, then each filter on what the
//! one before kept; the next token is drawn from the result with `multinomial`.

use shared::Tensor;

use crate::top_p::top_p;

/// How the next token is drawn: every transform is optional but the temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    /// `τ`: the logits are divided by it (1 leaves them).
    pub temperature: f32,
    /// Keep the `k` likeliest tokens.
    pub top_k: Option<usize>,
    /// Keep the nucleus of mass `p`.
    pub top_p: Option<f32>,
    /// Keep the tokens at least `p_base` times as likely as the likeliest.
    pub min_p: Option<f32>,
    /// Push down the logits of the tokens already in the sequence.
    pub repetition_penalty: Option<f32>,
}

impl Sampler {
    /// Plain sampling from the softmax: temperature 1, no filter, no penalty.
    pub const PLAIN: Sampler = Sampler {
        temperature: 1.0,
        top_k: None,
        top_p: None,
        min_p: None,
        repetition_penalty: None,
    };
}

/// The probabilities the next token is drawn from: the penalty on the `seen` tokens, the
/// temperature, then top-k, top-p and min-p, each on the tokens the one before kept.
///
/// # Shapes
/// `logits`: `[vocab]`; every seen id below `vocab`. Returns `[vocab]`.
// ANCHOR: next_token_probs
pub fn next_token_probs(logits: &Tensor, seen: &[i64], sampler: &Sampler) -> Tensor {
    let penalized = match sampler.repetition_penalty {
        Some(penalty) => repetition_penalty(logits, seen, penalty),
        None => logits.clone(),
    };
    let mut logits = penalized / sampler.temperature;
    // Each filter returns probabilities; a token it gives 0 is gone for the next one.
    let drop = |logits: &Tensor, probs: Tensor| {
        logits.masked_fill(&probs.eq_scalar(0.0), f32::NEG_INFINITY)
    };
    if let Some(k) = sampler.top_k {
        logits = drop(&logits, top_k(&logits, k));
    }
    if let Some(p) = sampler.top_p {
        logits = drop(&logits, top_p(&logits, p));
    }
    if let Some(p_base) = sampler.min_p {
        logits = drop(&logits, min_p(&logits, p_base));
    }
    logits.softmax(-1)
}
// ANCHOR_END: next_token_probs

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
    let (largest, _) = logits.topk(k, -1, true, true); // largest first
    let kth = largest.get(k as i64 - 1).item();
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
/// positive, multiplied by it where negative, once however often a token was seen.
///
/// # Shapes
/// `logits`: `[vocab]`; every seen id below `vocab`. Returns `[vocab]`.
// ANCHOR: repetition_penalty
pub fn repetition_penalty(logits: &Tensor, seen: &[i64], penalty: f32) -> Tensor {
    let mut is_seen = vec![false; logits.numel()];
    for &token in seen {
        is_seen[token as usize] = true; // a token seen twice is pushed down once
    }
    let values = logits
        .to_vec()
        .into_iter()
        .zip(is_seen)
        .map(|(v, seen)| match seen {
            false => v,
            true if v < 0.0 => v * penalty,
            true => v / penalty,
        })
        .collect();
    Tensor::from_vec(values, logits.sizes())
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
    Tensor::from_vec(mask, t.sizes())
}

/// The samplers whose generations chapter 15 prints (and chapter 20, on a real model).
pub fn samplers() -> Vec<(&'static str, Sampler)> {
    let plain = Sampler::PLAIN;
    vec![
        ("temperature 1", plain),
        (
            "temperature 0.7, top-k 5",
            Sampler {
                temperature: 0.7,
                top_k: Some(5),
                ..plain
            },
        ),
        (
            "top-p 0.9",
            Sampler {
                top_p: Some(0.9),
                ..plain
            },
        ),
        (
            "temperature 1.5, min-p 0.1",
            Sampler {
                temperature: 1.5,
                min_p: Some(0.1),
                ..plain
            },
        ),
        (
            "repetition penalty 1.3",
            Sampler {
                repetition_penalty: Some(1.3),
                ..plain
            },
        ),
        (
            "top-k 1",
            Sampler {
                top_k: Some(1),
                ..plain
            },
        ),
    ]
}
