//! Two changes to the scores before the softmax, and what they do to the weights.
//!
//! Adding the same constant `c` to every score multiplies every `exp` by the same factor
//! `exp(c)`, which the division by the sum cancels: the weights stay as they were (the
//! stable softmax relies on this with `c = -max`). Multiplying every score by a factor
//! `t` is different: gaps between scores grow (`t > 1`) or shrink (`t < 1`), and softmax
//! turns larger gaps into weights further apart. Dividing by `√d_k` in chapter 4 is such a
//! factor, below 1.

use shared::Tensor;

use crate::answers::Effect;

/// Every score plus the same constant `c`.
///
/// # Shapes
/// `scores`: any shape. Returns the same shape.
// ANCHOR: shift_scores
pub fn shift_scores(scores: &Tensor, c: f32) -> Tensor {
    scores + c
}
// ANCHOR_END: shift_scores

/// Every score times the same `factor`.
///
/// # Shapes
/// `scores`: any shape. Returns the same shape.
// ANCHOR: scale_scores
pub fn scale_scores(scores: &Tensor, factor: f32) -> Tensor {
    scores * factor
}
// ANCHOR_END: scale_scores

/// The question: what does [`shift_scores`] do to the softmax of a row of scores (not
/// all equal), for any constant `c`?
// ANCHOR: predict_shift
pub fn predict_shift(c: f32) -> Effect {
    // exp(s + c) = exp(s)·exp(c): the common factor cancels in the division.
    let _ = c;
    Effect::Unchanged
}
// ANCHOR_END: predict_shift

/// The question: what does [`scale_scores`] do to the softmax of a row of scores (not all
/// equal), for a `factor > 0`?
// ANCHOR: predict_scale
pub fn predict_scale(factor: f32) -> Effect {
    // The gaps between scores are multiplied by `factor`.
    if factor > 1.0 {
        Effect::Sharper
    } else if factor < 1.0 {
        Effect::Flatter
    } else {
        Effect::Unchanged
    }
}
// ANCHOR_END: predict_scale
