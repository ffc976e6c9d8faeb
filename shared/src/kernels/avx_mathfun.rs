//! The float32 logarithm and sine/cosine of PyTorch's AVX2 normal kernel, one lane at a time.
//!
//! PyTorch's block Box–Muller (`normal_fill_16_AVX2`) does not call the C library: it calls
//! `log256_ps` and `sincos256_ps` from `ATen/native/cpu/avx_mathfun.h`, Julien Pommier's AVX port
//! of the Cephes `logf`/`sinf`/`cosf` polynomials. Their results differ from the correctly
//! rounded log, sin and cos by an ulp for some inputs, so they must be copied exactly.
//!
//! "Exactly" includes the fused multiply-adds. The header writes separate `_mm256_mul_ps` and
//! `_mm256_add_ps` calls, but GCC compiles the AVX2 kernels with `-mfma` and contracts a multiply
//! whose result feeds an add into one `vfmadd` (a single rounding). Only some multiplies are
//! contracted: when both operands of an add are products, just one of them is fused, and a
//! product that is itself multiplied again stays rounded. Every `mul_add` below is such a
//! contraction, and every plain `*` next to one is a product GCC left rounded; the sites were
//! pinned down against real PyTorch's draws. Vector lanes are independent,
//! so a scalar copy of one lane gives the same bits.
//!
//! Measured against PyTorch 2.13.0's `torch.randn` on AVX2 and AVX-512 processors: the
//! random-number fixtures (`tests/fixtures/rng_fixtures_public.json`, `rng_vectors.json`).

/// `sqrt(1/2)`: mantissas below it are doubled so the log polynomial sees `t` in about ±0.3.
const SQRTHF: f32 = f32::from_bits(0x3F35_04F3);
/// Cephes `logf` polynomial coefficients, highest degree first.
const LOG_P: [f32; 9] = [
    f32::from_bits(0x3D90_21BB), // P0 =  7.0376836e-2
    f32::from_bits(0xBDEB_D1B8), // P1 = -0.1151461
    f32::from_bits(0x3DEF_251A), // P2 =  0.11676998
    f32::from_bits(0xBDFE_5D4F), // P3 = -0.12420141
    f32::from_bits(0x3E11_E9BF), // P4 =  0.14249323
    f32::from_bits(0xBE2A_AE50), // P5 = -0.16668057
    f32::from_bits(0x3E4C_CEAC), // P6 =  0.20000714
    f32::from_bits(0xBE7F_FFFC), // P7 = -0.24999994
    f32::from_bits(0x3EAA_AAAA), // P8 =  0.33333331
];
/// `ln 2` split in two (Q2 + Q1): Q2 has few bits, so `e * Q2` is exact for small `e`.
const LOG_Q1: f32 = f32::from_bits(0xB95E_8083); // -2.1219444e-4
const LOG_Q2: f32 = f32::from_bits(0x3F31_8000); // 0.693359375

/// `-π/4` split in three pieces (Cody–Waite), so `x - j·π/4` loses no bits.
const DP1: f32 = f32::from_bits(0xBF49_0000); // -0.78515625
const DP2: f32 = f32::from_bits(0xB97D_A000); // -2.4187565e-4
const DP3: f32 = f32::from_bits(0xB322_2169); // -3.7748951e-8
/// Cephes `sinf` coefficients.
const SIN_P: [f32; 3] = [
    f32::from_bits(0xB94C_A1F9), // S0 = -1.9515296e-4
    f32::from_bits(0x3C08_839E), // S1 =  8.3321612e-3
    f32::from_bits(0xBE2A_AAA3), // S2 = -0.16666655
];
/// Cephes `cosf` coefficients.
const COS_P: [f32; 3] = [
    f32::from_bits(0x37CC_F5CE), // C0 =  2.4433157e-5
    f32::from_bits(0xBAB6_061A), // C1 = -1.3887316e-3
    f32::from_bits(0x3D2A_AAA5), // C2 =  4.1666646e-2
];
/// `4/π`, to count octants.
const FOPI: f32 = f32::from_bits(0x3FA2_F983); // 1.2732395

/// One lane of `log256_ps`: Cephes `logf` in float32, for `x > 0`.
///
/// Writes `x = m · 2^e` with `m` in `[sqrt(1/2), sqrt(2))`, then `ln x = e·ln 2 + ln(1 + t)` with
/// `t = m - 1` and a degree-9 polynomial for `ln(1 + t)`.
pub(crate) fn log(x: f32) -> f32 {
    // Flush subnormals to the smallest normal float (never active for Box–Muller's inputs,
    // which are at least 2^-24).
    let x = x.max(f32::MIN_POSITIVE);

    // Exponent and a mantissa in [0.5, 1), read straight from the bits.
    let bits = x.to_bits();
    let exponent = (bits >> 23) as i32 - 127;
    let m = f32::from_bits((bits & 0x807F_FFFF) | 0x3F00_0000);
    let e = exponent as f32 + 1.0;

    // Below sqrt(1/2), use 2m and e - 1 instead, keeping t = m - 1 small. The vector code adds
    // `m AND mask` (m or +0.0) and subtracts `1 AND mask` (1 or +0.0); adding zero is exact.
    let small = m < SQRTHF;
    let t = (m - 1.0) + if small { m } else { 0.0 };
    let e = e - if small { 1.0 } else { 0.0 };
    let z = t * t;

    // Horner's scheme: each `y * t + P` is a multiply feeding an add, so GCC fuses it.
    let mut y = LOG_P[0].mul_add(t, LOG_P[1]);
    for &p in &LOG_P[2..] {
        y = y.mul_add(t, p);
    }
    // `y * t` is multiplied again by z, so it stays a rounded product. Then `y·z + e·Q1` adds two
    // products: GCC fused the first and rounded `e * Q1` beforehand.
    let y = y * t;
    let y = y.mul_add(z, e * LOG_Q1);
    // `y - z·0.5`, fused (z·0.5 is exact anyway unless it underflows).
    let y = (-z).mul_add(0.5, y);
    // `(t + y) + e·Q2`: the final add absorbs the product e·Q2.
    e.mul_add(LOG_Q2, t + y)
}

/// One lane of `sincos256_ps`: Cephes `sinf` and `cosf` in float32, returned as `(sin, cos)`.
///
/// Reduces `x` by a multiple `j` of π/4 to about ±π/4, evaluates both the sine and the cosine
/// polynomial there, and picks and signs them by the octant `j`. Only `x >= 0` is supported:
/// Box–Muller's angle `2π·u` never is negative, so the header's sign handling for negative
/// inputs is left out.
pub(crate) fn sincos(x: f32) -> (f32, f32) {
    debug_assert!(x >= 0.0, "sincos is only written for non-negative angles");

    // The octant, rounded up to even: j is a multiple of 2 and x - j·π/4 lies in about ±π/4.
    // `as i32` truncates like `_mm256_cvttps_epi32` (x is far below i32::MAX here).
    let j = ((x * FOPI) as i32 + 1) & !1;
    let yf = j as f32;

    // x - j·π/4 in three fused steps: each `yf * DP + x` has a single rounding.
    let x = yf.mul_add(DP1, x);
    let x = yf.mul_add(DP2, x);
    let x = yf.mul_add(DP3, x);
    let z = x * x;

    // cos x ≈ 1 - z/2 + z²·(C0·z² + C1·z + C2). The last product `c * z` is multiplied by z
    // again, so it is rounded; the multiply by z that feeds the subtraction is fused, while
    // the subtracted `z * 0.5` is a rounded product.
    let c = COS_P[0].mul_add(z, COS_P[1]).mul_add(z, COS_P[2]) * z;
    let c = c.mul_add(z, -(z * 0.5)) + 1.0;

    // sin x ≈ x + x·z·(S0·z² + S1·z + S2): again the product by z is rounded, and the
    // multiply by x feeding the add is fused.
    let s = SIN_P[0].mul_add(z, SIN_P[1]).mul_add(z, SIN_P[2]) * z;
    let s = s.mul_add(x, x);

    // For j = 2 or 6 (x nearer an odd multiple of π/2) the reduced sine is the cosine of x and
    // the other way round.
    let (sin, cos) = if j & 2 == 0 { (s, c) } else { (c, s) };
    // Signs by octant, as the header computes them with 32-bit integer arithmetic.
    let sin = if j & 4 != 0 { -sin } else { sin };
    let cos = if (j - 2) & 4 == 0 { -cos } else { cos };
    (sin, cos)
}

#[cfg(test)]
mod tests {
    use super::{log, sincos};
    use proptest::prelude::*;

    /// Distance in ulps between two finite floats of the same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn log_of_one_is_zero() {
        assert_eq!(log(1.0).to_bits(), 0);
    }

    proptest! {
        #[test]
        fn log_is_within_one_ulp(k in 1u32..=(1 << 24)) {
            // The inputs Box–Muller feeds it: 1 - u for u on the 2^-24 grid.
            let x = k as f32 / (1u32 << 24) as f32;
            let exact = (f64::from(x)).ln() as f32;
            prop_assert!(ulps(log(x), exact) <= 1, "x = {x}");
        }

        #[test]
        fn sincos_is_within_one_ulp(k in 0u32..(1 << 24)) {
            // The angles Box–Muller feeds it: f32(2π) times u on the 2^-24 grid.
            let theta = f32::from_bits(0x40C9_0FDB) * (k as f32 / (1u32 << 24) as f32);
            let (sin, cos) = sincos(theta);
            let (exact_sin, exact_cos) = f64::from(theta).sin_cos();
            // Near a zero of sin or cos an ulp of the result is tiny, so compare absolutely.
            prop_assert!((f64::from(sin) - exact_sin).abs() <= 1.2e-7, "theta = {theta}");
            prop_assert!((f64::from(cos) - exact_cos).abs() <= 1.2e-7, "theta = {theta}");
        }
    }
}
