//! Exercise: shift and scale the scores, and predict what each does to the softmax.
//! Replace the `todo!()`s; test with
//! `cargo test -p ch03-softmax --features exercise shift_and_scale`.

use shared::Tensor;

use crate::answers::Effect;

/// Every score plus the same constant `c`.
///
/// # Shapes
/// `scores`: any shape. Returns the same shape.
pub fn shift_scores(scores: &Tensor, c: f32) -> Tensor {
    // TODO: add `c` to every score.
    let _ = (scores, c);
    todo!("shift_scores")
}

/// Every score times the same `factor`.
///
/// # Shapes
/// `scores`: any shape. Returns the same shape.
pub fn scale_scores(scores: &Tensor, factor: f32) -> Tensor {
    // TODO: multiply every score by `factor`.
    let _ = (scores, factor);
    todo!("scale_scores")
}

/// The question: what does [`shift_scores`] do to the softmax of a row of scores (not
/// all equal), for any constant `c`?
pub fn predict_shift(c: f32) -> Effect {
    // TODO: your prediction (it may depend on `c`).
    let _ = c;
    todo!("predict_shift")
}

/// The question: what does [`scale_scores`] do to the softmax of a row of scores (not all
/// equal), for a `factor > 0`?
pub fn predict_scale(factor: f32) -> Effect {
    // TODO: your prediction (it may depend on `factor`).
    let _ = factor;
    todo!("predict_scale")
}
