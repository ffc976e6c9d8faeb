//! Gated DeltaNet's short convolution: every channel mixes its last four tokens.
//!
//! `y_t = Σ_{i=0}^{3} w_i ⊙ x_{t−3+i}`, one weight per channel and tap, no bias, and zeros
//! before the sequence's first token (a causal, depthwise convolution of kernel size 4).
//! Qwen3-Next and Qwen3.5 pass the projections to `q`, `k` and `v` through it, then through
//! SiLU, before the recurrence: each token's query, key and value then carry a little of
//! the three tokens before it, which the delta rule, one token at a time, cannot see.

use shared::rng::linear_weight_bound;
use shared::{Tensor, cat, stack, zeros};

/// Taps of the convolution: the token and the three before it.
pub const KERNEL: usize = 4;

/// A causal depthwise convolution of [`KERNEL`] taps.
pub struct ShortConv {
    /// `[channels, KERNEL]`: `weight[c, i]` multiplies channel `c` of token `t − 3 + i`.
    pub weight: Tensor,
}

impl ShortConv {
    /// Draws the weight as `nn.Conv1d(channels, channels, 4, groups=channels, bias=False)`
    /// does: uniform in `±1/√4`, from the default generator.
    ///
    /// # Shapes
    /// Inputs of `[T, channels]`.
    pub fn new(channels: usize) -> ShortConv {
        let bound = linear_weight_bound(KERNEL);
        let mut weight = zeros(&[channels, KERNEL]);
        weight.uniform_(-bound, bound);
        ShortConv { weight }
    }

    /// The whole sequence at once: `y_t = Σ_i w_i ⊙ x_{t−3+i}`, the taps added in order.
    ///
    /// # Shapes
    /// `x`: `[T, channels]`. Returns `[T, channels]`.
    // ANCHOR: short_conv
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let t = x.size(0);
        // Three rows of zeros stand for the tokens before the first.
        let padded = cat(&[zeros(&[KERNEL - 1, x.size(1)]), x.clone()], 0);
        let tap = |i: usize| padded.slice(0, i..i + t) * self.weight.select(1, i);
        (1..KERNEL).fold(tap(0), |y, i| y + tap(i))
    }
    // ANCHOR_END: short_conv

    /// Token by token, as in generation: the convolution keeps the last three inputs of
    /// every channel and reads them with the new one. The same products added in the same
    /// order as [`ShortConv::forward`], so the same numbers.
    ///
    /// # Shapes
    /// `x`: `[T, channels]`. Returns `[T, channels]`.
    // ANCHOR: short_conv_decode
    pub fn decode(&self, x: &Tensor) -> Tensor {
        let mut last_three = zeros(&[KERNEL - 1, x.size(1)]);
        let mut out = Vec::new();
        for t in 0..x.size(0) {
            let window = cat(&[last_three, x.slice(0, t..t + 1)], 0);
            let tap = |i: usize| window.get(i) * self.weight.select(1, i);
            out.push((1..KERNEL).fold(tap(0), |y, i| y + tap(i)));
            last_three = window.slice(0, 1..);
        }
        stack(&out, 0)
    }
    // ANCHOR_END: short_conv_decode
}
