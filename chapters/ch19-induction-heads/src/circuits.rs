//! Reading the trained circuit: where each head looks, what zeroing it does, which position
//! a layer-0 head's query looks for and which token a head writes.
//!
//! A head's attention decides *where* to read (its QK circuit: queries against keys) and its
//! value and output projections decide *what* it writes into the stream (its OV circuit).
//! Both can be read from the weights alone, without any input sequence.

use shared::Tensor;

use crate::data::{TOKENS, VOCAB};
use crate::model::{AttentionOnly, D_MODEL, HEAD_DIM};

/// The index of the largest value (the first one on a tie, as `torch.max` returns it).
///
/// # Shapes
/// Any non-empty slice.
pub fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// For every query from `first` on, the key it weighs most and that weight.
///
/// # Shapes
/// `weights`: `[TOKENS, TOKENS]`, one head's attention on one sequence.
pub fn strongest_keys(weights: &Tensor, first: usize) -> Vec<(usize, usize, f32)> {
    let w = weights.to_vec();
    (first..TOKENS)
        .map(|q| {
            let row = &w[q * TOKENS..q * TOKENS + q + 1];
            let key = argmax(row);
            (q, key, row[key])
        })
        .collect()
}

/// A layer-0 head's QK circuit on the positions alone: for how many positions `i ≥ 1` the
/// query of position `i`'s embedding scores the key of position `i − 1` highest among
/// positions `0..=i`.
///
/// # Shapes
/// Returns a count out of `TOKENS − 1`.
// ANCHOR: previous_token_qk
pub fn looks_one_back(model: &AttentionOnly, head: usize) -> usize {
    let pos = &model.pos.weight; // [TOKENS, D_MODEL]
    let qkv = &model.blocks[0].qkv;
    let bias = qkv.bias.as_ref().expect("made with a bias");
    let project = |part: usize| {
        let rows = part * D_MODEL..(part + 1) * D_MODEL;
        &pos.matmul(&qkv.weight.slice(0, rows.clone()).t()) + &bias.slice(0, rows)
    };
    let (queries, keys) = (project(0), project(1));
    let cols = head * HEAD_DIM..(head + 1) * HEAD_DIM;
    let qk = queries
        .slice(1, cols.clone())
        .matmul(&keys.slice(1, cols).t())
        .to_vec();
    (1..TOKENS)
        .filter(|&i| argmax(&qk[i * TOKENS..i * TOKENS + i + 1]) == i - 1)
        .count()
}
// ANCHOR_END: previous_token_qk

/// A head's OV circuit on the tokens alone: for how many tokens `t` the token embedding of
/// `t`, read by the head (values) and written into the stream (output projection), makes
/// `t` itself the likeliest next token through the unembedding: the head copies.
///
/// # Shapes
/// Returns a count out of `VOCAB`.
// ANCHOR: copying_ov
pub fn copies(model: &AttentionOnly, layer: usize, head: usize) -> usize {
    let block = &model.blocks[layer];
    let values = 2 * D_MODEL + head * HEAD_DIM..2 * D_MODEL + (head + 1) * HEAD_DIM;
    let cols = head * HEAD_DIM..(head + 1) * HEAD_DIM;
    let ov = model
        .tok
        .weight
        .matmul(&block.qkv.weight.slice(0, values).t())
        .matmul(&block.proj.weight.slice(1, cols).t());
    let logits = ov.matmul(&model.unembed.weight.t()).to_vec();
    (0..VOCAB)
        .filter(|&t| argmax(&logits[t * VOCAB..(t + 1) * VOCAB]) == t)
        .count()
}
// ANCHOR_END: copying_ov
