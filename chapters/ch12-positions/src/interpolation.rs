//! Position interpolation, kept in its own file because it is an exercise.
//!
//! A model trained on `L` positions has seen the angles `m·θ_i` for `m < L` only. Chen et
//! al. (2023, "Extending Context Window of Large Language Models via Positional
//! Interpolation") read a text `s` times longer by dividing every position by `s`: the
//! positions `0 .. s·L` become `0 .. L` again, in smaller steps.

/// The offset of plain RoPE whose score equals that of a query at `m` and a key at `n`
/// when both positions are divided by `scale`: the score of `rope_at(q, [m / scale])`
/// with `rope_at(k, [n / scale])` equals the score of `q` at 0 with `k` at this offset.
///
/// # Shapes
/// Scalars.
// ANCHOR: interpolated_offset
pub fn interpolated_offset(m: f32, n: f32, scale: f32) -> f32 {
    // R(-m/s·θ) R(n/s·θ) = R((n - m)/s·θ): still a function of n - m only.
    (n - m) / scale
}
// ANCHOR_END: interpolated_offset
