//! Exercise: the softcap's backward. Replace the `todo!()`; test with
//! `cargo test -p ch16-flex-attention --features exercise --test exercises exercise_softcap_grad`.

use crate::backward::ScoreModGrad;

/// The backward of [`softcap`](crate::recipes::softcap), `cap · tanh(score / cap)`:
/// `grad · (1 − tanh²(score / cap))`.
///
/// # Shapes
/// One gradient, one score and its indices; returns one gradient.
pub fn softcap_grad(cap: f32) -> impl ScoreModGrad + Copy {
    // TODO: return a closure `move |grad, score, _b, _h, _q_idx, _kv_idx| ...` that
    // multiplies `grad` by the derivative of `cap · tanh(score / cap)` with respect to
    // `score`.
    let _ = cap;
    |_grad: f32,
     _score: f32,
     _b: usize,
     _h: usize,
     _q_idx: usize,
     _kv_idx: usize|
     -> f32 { todo!("softcap_grad") }
}
