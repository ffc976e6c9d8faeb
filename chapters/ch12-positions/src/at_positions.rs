//! RoPE at any positions: the half-split rotation with the positions given, not counted
//! `0, 1, 2, ..`. A cache of earlier tokens, a padded batch or position interpolation all
//! rotate a token by an angle that is not its index in the tensor.

use shared::{Tensor, cat};

use crate::frequencies::inv_freq;

/// Rotates half-split pair `i` (features `i` and `i + d/2`) of token `t` by
/// `positions[t]·θ_i`, `θ_i = 1 / base^(2i/d)`.
///
/// # Shapes
/// `x`: `[.., tokens, d]` (`d` even), `positions`: `[tokens]` (any real numbers).
/// Returns the shape of `x`.
// ANCHOR: rope_at
pub fn rope_at(x: &Tensor, positions: &Tensor, base: f32) -> Tensor {
    let angles = positions.outer(&inv_freq(x.size(-1), base)); // [tokens, d/2]
    let (cos, sin) = (angles.cos(), angles.sin());
    let half = x.size(-1) / 2;
    let (a, b) = (x.slice(-1, ..half), x.slice(-1, half..)); // pair i is (a_i, b_i)
    let a_turned = &(&a * &cos) - &(&b * &sin); // a·cos − b·sin
    let b_turned = &(&b * &cos) + &(&a * &sin); // b·cos + a·sin
    cat(&[a_turned, b_turned], -1)
}
// ANCHOR_END: rope_at
