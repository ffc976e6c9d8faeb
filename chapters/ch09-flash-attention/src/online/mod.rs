//! The online softmax: a softmax computed while the scores arrive in blocks, keeping two
//! numbers per row instead of the whole row (Milakov and Gimelshein, 2018, "Online
//! normalizer calculation for softmax").
//!
//! The stable softmax of chapter 3 needs the largest score `m` before it can compute any
//! `exp(sᵢ - m)`, so it reads the row twice. The online version keeps a running maximum
//! `m` and a running sum `l = Σ exp(sᵢ - m)` of the scores seen so far. When a block
//! brings a larger maximum `m'`, every term already in `l` is too large by the factor
//! `exp(m - m')`; multiplying `l` by that factor puts it right. The same factor fixes the
//! weighted sum of values that attention accumulates next to `l` (see
//! [`crate::kernel`]), so the weights never need to be stored.
//!
//! The update for one block is in `update.rs` (an exercise).

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
}

#[cfg_attr(feature = "exercise", path = "../../exercises/online.rs")]
mod update;
