//! ALiBi (Press, Smith and Lewis, 2021, "Train Short, Test Long: Attention with Linear
//! Biases Enables Input Length Extrapolation"): no position embedding at all; instead
//! every score is lowered in proportion to how far back its key is, `score + m·(kv_idx -
//! q_idx)`, with a slope `m` of its own in every head, so some heads look far and some
//! near.

use crate::recipes::ScoreMod;

/// The slopes of `heads` heads: the geometric sequence `2^(-8/heads)`, `2^(-16/heads)`,
/// ..., `2^(-8)` (the paper's choice for a power of two heads).
///
/// # Shapes
/// Returns `[heads]`.
// ANCHOR: alibi_slopes
pub fn alibi_slopes(heads: usize) -> Vec<f32> {
    (1..=heads)
        .map(|h| 2f64.powf(-8.0 * h as f64 / heads as f64) as f32)
        .collect()
}
// ANCHOR_END: alibi_slopes

/// ALiBi's score_mod: `score + slopes[h] · (kv_idx - q_idx)`, a penalty that grows with
/// the distance to a key before the query.
///
/// # Shapes
/// `slopes`: `[heads]`, one per query head.
// ANCHOR: alibi
pub fn alibi(slopes: Vec<f32>) -> impl ScoreMod + Clone {
    move |score, _b, h, q_idx, kv_idx| {
        let distance = kv_idx as f32 - q_idx as f32; // ≤ 0 for the keys a causal query sees
        score + slopes[h] * distance
    }
}
// ANCHOR_END: alibi
