//! What the backward tests share: inputs drawn from a seed, and two score_mods' backwards
//! written from their definitions, so that no test depends on an exercise.

use ch16_flex_attention::backward::ScoreModGrad;
use shared::{Tensor, manual_seed, randn};

/// The softcap's backward, `grad · (1 − tanh²(score / cap))`, written here from its
/// definition so these tests do not depend on the exercise `softcap_grad`.
pub fn capped_grad(cap: f32) -> impl ScoreModGrad + Copy {
    move |grad, score, _b, _h, _q, _kv| {
        let tanh = ((score / cap) as f64).tanh();
        (grad as f64 * (1.0 - tanh * tanh)) as f32
    }
}

/// A bias of ALiBi's form, `score + m_h · (kv_idx − q_idx)`, written here so these tests
/// do not depend on the exercise `alibi`.
pub fn distance_bias(
    score: f32,
    _b: usize,
    h: usize,
    q_idx: usize,
    kv_idx: usize,
) -> f32 {
    score + 0.25 / (h + 1) as f32 * (kv_idx as f32 - q_idx as f32)
}

/// `q`, `k`, `v` and the output's gradient: batch 2, `heads` query heads reading
/// `kv_heads` key/value heads, `tokens` tokens of 8 features.
pub fn inputs(
    seed: u64,
    heads: usize,
    kv_heads: usize,
    tokens: usize,
) -> [Tensor; 4] {
    manual_seed(seed);
    [
        randn(&[2, heads, tokens, 8]),
        randn(&[2, kv_heads, tokens, 8]),
        randn(&[2, kv_heads, tokens, 8]),
        randn(&[2, heads, tokens, 8]),
    ]
}
