//! The frequencies of the sinusoidal encodings and of RoPE, and the angle of every
//! (position, frequency) pair.
//!
//! Pair `i` of a `d`-dimensional vector turns at the frequency
//! `θ_i = 1 / base^(2i/d)`, `i = 0 .. d/2 - 1`: from 1 radian per position for `i = 0`
//! down to nearly `1/base` for the last pair, a geometric series like the hands of a clock
//! with ever slower hands. The angle of position `m` is `m·θ_i`.

use shared::{Tensor, arange};

/// `inv_freq = 1 / base^(arange(0, d, 2) / d)`, written as PyTorch users write it (and as
/// Hugging Face's Llama computes it): `θ_i` for `i = 0 .. d/2 - 1`.
///
/// Each step rounds as in PyTorch: `2i` converted to `f32`, one division by `d`, `base`
/// raised to that power (the correctly rounded value, which is PyTorch's for the head sizes
/// used here), then one division.
///
/// # Shapes
/// Returns `[d / 2]` (`d` even).
// ANCHOR: inv_freq
pub fn inv_freq(d: usize, base: f32) -> Tensor {
    let exponents = arange(0, d, 2).float() / d as f32; // 2i/d
    1.0 / &exponents.rpow(base) // θ_i = 1 / base^(2i/d)
}
// ANCHOR_END: inv_freq

/// The angle `m·θ_i` of every position `m = 0 .. tokens - 1` and pair `i`:
/// `torch.outer(arange(tokens).float(), inv_freq)`, one rounded product each.
///
/// # Shapes
/// Returns `[tokens, d / 2]`.
// ANCHOR: rope_angles
pub fn rope_angles(tokens: usize, d: usize, base: f32) -> Tensor {
    let positions = arange(0, tokens, 1).float();
    positions.outer(&inv_freq(d, base))
}
// ANCHOR_END: rope_angles
