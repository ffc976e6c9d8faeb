//! The softcap's backward (an exercise): the gradient through `cap · tanh(score / cap)`.

use crate::backward::ScoreModGrad;

/// The backward of [`softcap`](crate::recipes::softcap), `cap · tanh(score / cap)`:
/// `grad · (1 − tanh²(score / cap))`, through the forward's steps in reverse
/// (times `cap`, the derivative of `tanh` in `f64` where the forward took
/// `tanh`, divided by `cap`).
///
/// # Shapes
/// One gradient, one score and its indices; returns one gradient.
pub fn softcap_grad(cap: f32) -> impl ScoreModGrad + Copy {
    move |grad, score, _b, _h, _q_idx, _kv_idx| {
        let tanh = ((score / cap) as f64).tanh();
        ((grad * cap) as f64 * (1.0 - tanh * tanh)) as f32 / cap
    }
}
