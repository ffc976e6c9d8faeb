//! What the real model's heads look at: every layer's attention weights, then two
//! measures on them.
//!
//! - **Attention sinks** (Xiao et al., 2023, "Efficient Streaming Language Models with
//!   Attention Sinks"): trained models pour a large share of many heads' attention onto
//!   the first token, whatever it is, a place to put attention that should go nowhere.
//!   Chapter 15 described them; here they are measured: the mean weight each layer's
//!   queries give to key 0.
//! - **Induction heads** (chapter 19): on a sequence of random tokens repeated once, a head
//!   that looks from each token of the repeat to the token after its earlier occurrence
//!   scores near 1 on chapter 19's induction score; a previous-token head scores near 1 on
//!   the previous-token score.

use ch15_modern_layer::attention::streaming_mask;
use ch15_modern_layer::{Recipe, TinyModel};
use ch19_induction_heads::scores::mean_weight_at_offset;

use crate::sink::sink_share;
use shared::{Tensor, manual_seed, randint};

/// The attention weights of every layer, and the logits.
///
/// # Shapes
/// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab]` logits and one
/// `[batch, n_heads, tokens, tokens]` tensor per layer.
// ANCHOR: attention_maps
pub fn attention_maps(
    model: &TinyModel,
    ids: &Tensor<i64>,
    recipe: &Recipe,
) -> (Tensor, Vec<Tensor>) {
    let t = ids.size(1);
    let positions: Vec<usize> = (0..t).collect();
    let hidden = streaming_mask(t, None, 0); // the causal mask
    let mut x = model.tok_emb.forward(ids);
    let mut maps = Vec::with_capacity(model.layers.len());
    for layer in &model.layers {
        let (q, k, _) =
            layer
                .attn
                .qkv(&layer.attn_norm.forward(&x), &positions, recipe);
        maps.push(layer.attn.weights(&q, &k, recipe, Some(&hidden)));
        x = layer.forward(&x, recipe, None).0;
    }
    let logits = model.lm_head.forward(&model.final_norm.forward(&x));
    (logits, maps)
}
// ANCHOR_END: attention_maps

/// One head's scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadScores {
    /// The layer, from 0.
    pub layer: usize,
    /// The head in its layer.
    pub head: usize,
    /// Chapter 19's induction score.
    pub induction: f64,
    /// Chapter 19's previous-token score.
    pub previous: f64,
    /// The share of attention on the first token.
    pub sink: f64,
}

/// The repeated random tokens of the induction test: token `bos`, then `half` random ids
/// (from the default generator), then the same ids again, `batch` times.
///
/// # Shapes
/// Returns `[batch, 1 + 2·half]`.
pub fn repeated_tokens(
    batch: usize,
    half: usize,
    bos: i64,
    seed: u64,
) -> Tensor<i64> {
    manual_seed(seed);
    let random = randint(1000, 40_000, &[batch, half]);
    let first = Tensor::from_vec(vec![bos; batch], &[batch, 1]);
    shared::cat(&[&first, &random, &random], 1)
}

/// The scores of every head on repeated tokens, and the loss (mean `−log p`) on the first
/// half and on the repeat.
///
/// # Shapes
/// `ids`: `[batch, 1 + 2·half]` from [`repeated_tokens`].
pub fn scan(
    model: &TinyModel,
    ids: &Tensor<i64>,
    half: usize,
    recipe: &Recipe,
) -> (Vec<HeadScores>, f64, f64) {
    let (logits, maps) = attention_maps(model, ids, recipe);
    let mut heads = Vec::new();
    for (layer, w) in maps.iter().enumerate() {
        let induction = mean_weight_at_offset(w, half - 1, half);
        let previous = mean_weight_at_offset(w, 1, 1);
        let sink = sink_share(w);
        for h in 0..induction.len() {
            heads.push(HeadScores {
                layer,
                head: h,
                induction: induction[h],
                previous: previous[h],
                sink: sink[h],
            });
        }
    }
    let log_probs = logits.log_softmax(-1);
    let (batch, tokens, vocab) = (ids.size(0), ids.size(1), log_probs.size(-1));
    let (lp, id) = (log_probs.to_vec(), ids.to_vec());
    let loss = |range: std::ops::Range<usize>| {
        let mut sum = 0.0;
        for b in 0..batch {
            for t in range.clone() {
                sum -= f64::from(
                    lp[(b * tokens + t) * vocab + id[b * tokens + t + 1] as usize],
                );
            }
        }
        sum / (batch * range.len()) as f64
    };
    (heads, loss(0..half), loss(half..2 * half))
}
