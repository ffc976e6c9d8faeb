//! A fast `exp` that the compiler can vectorise.
//!
//! `f32::exp` calls the C library: one value per call, and a call cannot be turned into a
//! vector instruction. In attention every score goes through `exp` once, and a plain
//! kernel spends about half its time there. This `exp` is written with nothing but
//! additions, multiplications, comparisons and bit operations, with no branch and no call,
//! so a loop over 16 scores becomes a handful of 16-lane vector instructions.
//!
//! The method (Cody and Waite's range reduction, Cephes' polynomial):
//!
//! 1. write `x = n·ln 2 + r` with `n` the integer nearest to `x / ln 2`, so `|r| ≤ ln 2 / 2`;
//! 2. then `eˣ = 2ⁿ · eʳ`: `2ⁿ` is put together directly from its bits (exponent field
//!    `n + 127`), and `eʳ` on the small interval is a degree-6 polynomial;
//! 3. `ln 2` is split in two parts, `LN2_HI` with only 9 significant bits (so `n·LN2_HI` is
//!    exact) and the small rest `LN2_LO`, so `r` comes out as accurate as `x` itself.
//!
//! The result is within 2 ulp of the true `eˣ` (the tests check every case they draw), it
//! is exactly 1 at 0, exactly 0 for `x = -∞` (a masked score) and below about -104, and
//! `+∞` above about 88.72.

/// `1.5 · 2²³`: adding it to a float `|y| < 2²²` rounds `y` to the nearest integer, which
/// then sits in the low bits of the sum.
const ROUND: f32 = 12_582_912.0;
/// `log₂ e`.
const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `ln 2` in two parts: 355/512, with 9 significant bits (so `n · LN2_HI` is exact for `|n| < 2¹⁵`) ...
const LN2_HI: f32 = 355.0 / 512.0; // 0.693359375
/// ... and the rest, `ln 2 - LN2_HI`.
const LN2_LO: f32 = -2.121_944_4e-4;
/// Below this `eˣ` rounds to 0 (half the smallest subnormal float is `e^-103.97`).
const X_MIN: f32 = -104.0;
/// Above this `eˣ` is `+∞` (the largest float is `e^88.72`).
const X_MAX: f32 = 88.8;
/// Cephes' `expf` polynomial: `eʳ ≈ 1 + r + r²·(P5 + P4·r + P3·r² + P2·r³ + P1·r⁴ + P0·r⁵)`
/// (Cephes gives `P5 = 0.50000001`, which rounds to 0.5 in `f32`).
const P0: f32 = 1.987_569_1e-4;
const P1: f32 = 1.398_199_9e-3;
const P2: f32 = 8.333_452e-3;
const P3: f32 = 4.166_579_6e-2;
const P4: f32 = 1.666_666_5e-1;
const P5: f32 = 0.5;

/// `eˣ` within 2 ulp, branch-free so that loops calling it vectorise.
///
/// Returns 0 for `x ≤ -104` (and `-∞`), `+∞` for `x ≥ 88.73`, NaN for NaN. Subnormal
/// results (`x < -87.3`) keep a precision of 2 ulp of the smallest normal float.
// ANCHOR: exp
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Clamp first (written as selects, which vectorise): every step below stays
    // finite.
    let x = if x < X_MIN { X_MIN } else { x };
    let x = if x > X_MAX { X_MAX } else { x };
    // n = round(x / ln 2), as a float and as an integer (the low bits of the sum).
    let shifted = x * LOG2E + ROUND;
    let n = shifted - ROUND;
    let n_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    // r = x - n·ln 2, in two steps so that no bit of r is lost.
    let r = x - n * LN2_HI - n * LN2_LO;
    // e^r on |r| ≤ ln 2 / 2.
    let poly = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5;
    let e_r = poly * (r * r) + r + 1.0;
    // 2ⁿ as two factors 2^(n/2), each a normal float even for n = -150 or n = 128.
    let half = n_int >> 1;
    let two_to = |e: i32| f32::from_bits(((e + 127) << 23) as u32);
    e_r * two_to(half) * two_to(n_int - half)
}
// ANCHOR_END: exp
