//! Exercise: the online softmax of one row. Replace the `todo!()`; test with
//! `cargo test -p ch09-flash-attention --features exercise online_softmax`.

use super::OnlineSoftmax;
use crate::exp::exp;

impl OnlineSoftmax {
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
