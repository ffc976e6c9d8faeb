//! Naming the heads, and what a key can read: the exercises of the chapter, kept in their
//! own file.
//!
//! A score says how much of one head's attention falls on a given relation between query
//! and key; the circuit's two heads are the ones whose scores stand out, and zeroing either
//! undoes the copying.

use crate::data::{Batch, TOKENS};
use crate::model::{AttentionOnly, HEADS};
use crate::scores::scores;

/// Each head's mean weight from a query `i` to the key `i − offset`, over every sequence
/// and every query `i ≥ offset`: `offset = 1` is the previous-token score; in the
/// fixed-offset run, layer 1 with `offset = TOKENS / 2 − 1` measures the shortcut.
///
/// # Shapes
/// `weights`: `[n, HEADS, TOKENS, TOKENS]`, `1 <= offset < TOKENS`. Returns one score per
/// head.
// ANCHOR: offset_score
pub fn offset_score(weights: &shared::Tensor, offset: usize) -> [f64; HEADS] {
    let w = weights.to_vec();
    let n = weights.size(0);
    let mut out = [0.0; HEADS];
    for (h, score) in out.iter_mut().enumerate() {
        let mut sum = 0.0;
        for b in 0..n {
            for i in offset..TOKENS {
                sum += f64::from(
                    w[((b * HEADS + h) * TOKENS + i) * TOKENS + i - offset],
                );
            }
        }
        *score = sum / (n * (TOKENS - offset)) as f64;
    }
    out
}
// ANCHOR_END: offset_score

/// The layer-1 head to zero to break copying, predicted without zeroing anything: the one
/// whose attention goes most to the token after the earlier occurrence.
///
/// # Shapes
/// `batch.ids`: `[n, TOKENS]`. Returns `(1, head)`.
// ANCHOR: copying_head
pub fn copying_head(model: &AttentionOnly, batch: &Batch) -> (usize, usize) {
    let induction = scores(model, batch, None).induction;
    let head = if induction[1] > induction[0] { 1 } else { 0 };
    (1, head)
}
// ANCHOR_END: copying_head

/// The layer-0 head the induction head depends on: the one that looks most at the
/// previous token.
///
/// # Shapes
/// `batch.ids`: `[n, TOKENS]`. Returns `(0, head)`.
// ANCHOR: previous_token_head
pub fn previous_token_head(model: &AttentionOnly, batch: &Batch) -> (usize, usize) {
    let previous = scores(model, batch, None).previous;
    let head = if previous[1] > previous[0] { 1 } else { 0 };
    (0, head)
}
// ANCHOR_END: previous_token_head

/// Whether the key that layer `layer` computes at position `key` can change when the token
/// at position `token` changes. A layer-0 key reads the embeddings of its own position
/// only; a layer-1 key reads the stream at its position, to which layer 0's heads have
/// added what they read from every position up to it.
///
/// # Shapes
/// Positions below `TOKENS`, `layer` below `LAYERS`.
// ANCHOR: key_reads
pub fn key_reads(layer: usize, key: usize, token: usize) -> bool {
    match layer {
        0 => token == key,
        _ => token <= key,
    }
}
// ANCHOR_END: key_reads
