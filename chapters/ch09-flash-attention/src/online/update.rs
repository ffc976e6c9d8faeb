//! [`OnlineSoftmax::update`]: one block of a row's scores folded into the running maximum and
//! sum.

use super::OnlineSoftmax;
use crate::exp::exp;

/// How many lanes the reductions run in: the maximum and the sum of a block are taken in 16
/// independent partial results, which the compiler turns into one 16-lane vector.
const LANES: usize = 16;

/// The largest of `scores` (`-∞` for none), taken in [`LANES`] partial maxima.
#[inline(always)]
fn block_max(scores: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = scores.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &s) in lanes.iter_mut().zip(chunk) {
            *lane = if s > *lane { s } else { *lane };
        }
    }
    rest.iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |m, &s| if s > m { s } else { m })
}

/// Replaces every score `s` by `exp(s - max)` and returns their sum, added in [`LANES`]
/// partial sums.
#[inline(always)]
fn exp_and_sum(scores: &mut [f32], max: f32) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let mut chunks = scores.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (lane, s) in lanes.iter_mut().zip(chunk) {
            *s = exp(*s - max);
            *lane += *s;
        }
    }
    let mut sum = 0.0;
    for s in chunks.into_remainder() {
        *s = exp(*s - max);
        sum += *s;
    }
    sum + lanes.iter().sum::<f32>()
}

impl OnlineSoftmax {
    /// Takes the next block of one row's scores: updates the running maximum and sum,
    /// replaces each score `s` by `exp(s - new max)` (the block's unnormalised weights), and
    /// returns the factor `exp(old max - new max)` by which everything accumulated before
    /// this block must be multiplied.
    ///
    /// Scores of `-∞` (masked keys) get weight 0. The first block must hold at least one
    /// finite score, so that the maximum is finite from then on.
    ///
    /// # Shapes
    /// `scores`: `[block]`, any length, overwritten with the weights.
    // ANCHOR: online_update
    #[inline(always)]
    pub fn update(&mut self, scores: &mut [f32]) -> f32 {
        let new_max = self.max.max(block_max(scores));
        // exp(-∞ - new_max) = 0: the first block throws away the empty sum.
        let rescale = exp(self.max - new_max);
        let block_sum = exp_and_sum(scores, new_max);
        self.sum = self.sum * rescale + block_sum;
        self.max = new_max;
        rescale
    }
    // ANCHOR_END: online_update
}
