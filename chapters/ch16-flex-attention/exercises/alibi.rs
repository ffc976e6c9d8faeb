//! Exercise: ALiBi as a score_mod. Replace the `todo!()`s; test with
//! `cargo test -p ch16-flex-attention --features exercise --test exercises exercise_alibi`.

use crate::recipes::ScoreMod;

/// The slopes of `heads` heads: the geometric sequence `2^(-8/heads)`, `2^(-16/heads)`,
/// ..., `2^(-8)` (the paper's choice for a power of two heads).
///
/// # Shapes
/// Returns `[heads]`.
pub fn alibi_slopes(heads: usize) -> Vec<f32> {
    // TODO: head h (counting from 1) gets 2^(-8·h/heads), computed in f64 and rounded
    // once to f32.
    let _ = heads;
    todo!("alibi_slopes")
}

/// ALiBi's score_mod: `score + slopes[h] · (kv_idx - q_idx)`, a penalty that grows with
/// the distance to a key before the query.
///
/// # Shapes
/// `slopes`: `[heads]`, one per query head.
pub fn alibi(slopes: Vec<f32>) -> impl ScoreMod + Clone {
    // TODO: return a closure `move |score, _b, h, q_idx, kv_idx| ...` that adds
    // slopes[h] times the signed distance kv_idx - q_idx (as an f32) to the score.
    let _ = slopes;
    |_score: f32, _b: usize, _h: usize, _q_idx: usize, _kv_idx: usize| -> f32 {
        todo!("alibi")
    }
}
