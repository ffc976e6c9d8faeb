//! Exercise: the online softmax of one row. Replace the `todo!()`; test with
//! `cargo test -p ch09-flash-attention --features exercise online_softmax`.

use crate::exp::exp;

/// The running state of one row of scores: the largest score so far and the sum of the
/// exponentials of all scores so far, each relative to that largest score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnlineSoftmax {
    /// The largest score seen so far (`-∞` before the first block).
    pub max: f32,
    /// `Σ exp(s - max)` over every score seen so far.
    pub sum: f32,
}

impl Default for OnlineSoftmax {
    fn default() -> Self {
        OnlineSoftmax::new()
    }
}

impl OnlineSoftmax {
    /// The state before any score: `max = -∞`, `sum = 0`.
    pub const fn new() -> OnlineSoftmax {
        OnlineSoftmax {
            max: f32::NEG_INFINITY,
            sum: 0.0,
        }
    }

    /// Takes the next block of one row's scores: updates the running maximum and sum,
    /// replaces each score `s` by `exp(s - new max)`, and returns the factor
    /// `exp(old max - new max)` by which everything accumulated before must be multiplied.
    ///
    /// # Shapes
    /// `scores`: `[block]`, any length, overwritten with the weights.
    pub fn update(&mut self, scores: &mut [f32]) -> f32 {
        // TODO: the new maximum is the larger of self.max and the block's largest score;
        // the factor is exp(self.max - new max) (your `exp`, or f32::exp); replace every
        // score by exp(score - new max) and add them up; the new sum is the old sum times
        // the factor plus the block's sum; store the new maximum; return the factor.
        let _ = (scores, exp);
        todo!("OnlineSoftmax::update")
    }
}
