//! `2ˣ` flushed to 0 below the normal range, one float at a time: the softmax weights of
//! the attention kernels. Each token's [`Simd::exp2_flushed`] is its vector version.

#[cfg(doc)]
use super::Simd;

// The constants of [`exp2_flushed_scalar`], shared with the vector versions.

/// `1.5 · 2²³`: adding it rounds a float `|x| < 2²²` to the nearest integer.
pub(super) const ROUND: f32 = 12_582_912.0;
/// From here on `2ˣ` overflows to `+∞`; larger arguments are clamped to it.
pub(super) const X_MAX: f32 = 128.0;
/// Cephes' polynomial for `2ᶠ` on `|f| ≤ 1/2`: `2ᶠ ≈ 1 + f·P(f)`, highest power first.
pub(super) const P: [f32; 6] = [
    1.535_336_2e-4,
    1.339_887_4e-3,
    9.618_438e-3,
    5.550_332_5e-2,
    2.402_264_8e-1,
    6.931_472e-1,
];

/// Below this, [`Simd::exp2_flushed`] gives 0. `2⁻¹²⁶` is the smallest normal `f32`; below
/// it `2ˣ` is a subnormal number or 0, and an Intel core computes a subnormal result (or
/// rounds one to 0) in a microcode assist that costs over a hundred cycles. Every masked
/// score is `-∞`, so without the flush each tile on the diagonal paid that for half its
/// lanes: at `n = 128` the kernel took about twice as long, at `n = 512` 1.4 times. A
/// weight below `2⁻¹²⁶ ≈ 1.2e-38` next to the row's largest weight, `2⁰ = 1`, changes no
/// sum.
pub const FLUSH_BELOW: f32 = -126.0;

/// `2ˣ` (within 2 ulp), but exactly 0 below [`FLUSH_BELOW`] (and for `-∞`), so that the
/// result is never a subnormal number; `+∞` from 128 on, NaN for NaN.
///
/// In base 2 the method of an `exp` (Cephes', chapter 9's `exp::exp`) gets shorter: `x = n + f` with `n` the nearest
/// integer is exact, no `ln 2` in two parts is needed, and `2ˣ = 2ⁿ · 2ᶠ` with `2ⁿ` put
/// together from its exponent bits and `2ᶠ` a polynomial on `|f| ≤ 1/2`. `2ⁿ` is applied
/// in two halves so that `n = 128` still overflows to `+∞` rather than wrapping around.
///
/// # Shapes
/// One `f32` in, one out (the vector versions do the same lane by lane).
// ANCHOR: exp2_flushed
#[inline(always)]
pub fn exp2_flushed_scalar(x: f32) -> f32 {
    if x < FLUSH_BELOW {
        return 0.0;
    }
    let x = if x > X_MAX { X_MAX } else { x };
    let shifted = x + ROUND;
    let n = shifted - ROUND; // x rounded to the nearest integer
    let n_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let f = x - n; // exact, |f| ≤ 1/2
    let mut poly = P[0];
    for p in &P[1..] {
        poly = poly * f + p;
    }
    let two_f = poly * f + 1.0;
    let half = n_int >> 1;
    let two_to = |e: i32| f32::from_bits(((e + 127) << 23) as u32);
    two_f * two_to(half) * two_to(n_int - half)
}
// ANCHOR_END: exp2_flushed
