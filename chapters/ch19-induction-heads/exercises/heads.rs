//! Naming the heads: your code (see `exercises/hints.md`).

use crate::data::Batch;
use crate::model::{AttentionOnly, HEADS};

/// Each head's mean weight from a query `i` to the key `i − offset`, over every sequence
/// and every query `i ≥ offset`.
///
/// # Shapes
/// `weights`: `[n, HEADS, TOKENS, TOKENS]`, `1 <= offset < TOKENS`. Returns one score per
/// head.
pub fn offset_score(weights: &shared::Tensor, offset: usize) -> [f64; HEADS] {
    // TODO: for each head, add up weights[b, h, i, i - offset] for every sequence b and
    // every query i from offset to TOKENS - 1 (in f64), and divide by how many you added.
    let _ = (weights, offset);
    todo!("offset_score")
}

/// The layer-1 head to zero to break copying, predicted without zeroing anything.
///
/// # Shapes
/// `batch.ids`: `[n, TOKENS]`. Returns `(1, head)`.
pub fn copying_head(model: &AttentionOnly, batch: &Batch) -> (usize, usize) {
    // TODO: which of the two layer-1 heads does the copying? Decide from what the chapter
    // measures of them on `batch` (crate::scores), and return (1, that head).
    let _ = (model, batch);
    todo!("copying_head")
}

/// The layer-0 head the induction head depends on.
///
/// # Shapes
/// `batch.ids`: `[n, TOKENS]`. Returns `(0, head)`.
pub fn previous_token_head(model: &AttentionOnly, batch: &Batch) -> (usize, usize) {
    // TODO: which layer-0 head gives the induction head what it needs? Decide from the
    // chapter's scores on `batch`, and return (0, that head).
    let _ = (model, batch);
    todo!("previous_token_head")
}

/// Whether the key that layer `layer` computes at position `key` can change when the token
/// at position `token` changes.
///
/// # Shapes
/// Positions below `TOKENS`, `layer` below `LAYERS`.
pub fn key_reads(layer: usize, key: usize, token: usize) -> bool {
    // TODO: derive it from the model's two equations: what does a layer-0 key see of the
    // sequence, and what has layer 0 added to the stream that a layer-1 key reads? Then
    // say why a model of one layer cannot find "the token after the earlier occurrence of
    // me".
    let _ = (layer, key, token);
    todo!("key_reads")
}
