//! The exact `exp` and `log` PyTorch's CPU softmax uses, written out step by step.
//!
//! A float32 `exp` is not one function: each library approximates e^x with its own
//! polynomial and rounds differently, and the last bit of about one result in ten depends on
//! which library ran. PyTorch's softmax kernels call three of them:
//!
//! - [`expf_u10`]: the SLEEF library's vectorised `exp` ("u10" = error below 1.0 ulp), which
//!   every AVX2 and AVX-512 softmax uses for its vector lanes;
//! - [`glibc_expf`]: the C library's scalar `expf`, for the few columns a softmax over a
//!   non-last dim handles one at a time, and for every element in the portable (DEFAULT)
//!   build;
//! - [`logf_u10`]: SLEEF's `log`, once per row of a `log_softmax`.
//!
//! Each is reproduced here operation for operation: `a.mul_add(b, c)` is the processor's
//! fused multiply-add (one rounding for `a·b + c`, as SLEEF's FMA build computes it), every
//! other operation rounds once, as in C.
//!
//! Measured against PyTorch 2.13.0's softmax and log_softmax on its AVX-512, AVX2 and
//! DEFAULT builds (`tests/fixtures/ops_fixtures.json`, `ops_fixtures_default_cpu.json`).

/// SLEEF's `expf_u10`: e^d in float32, as PyTorch's vectorised softmax computes it.
///
/// The idea: write `d = q·ln 2 + s` with an integer `q` and a small remainder `|s| ≤ ln2/2`;
/// then `e^d = 2^q · e^s`, where `e^s` is a short polynomial and `2^q` is exact (it only
/// changes the exponent bits).
///
/// # Shapes
/// One float in, one float out.
pub fn expf_u10(d: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has the FMA instructions.
        return unsafe { expf_u10_fma(d) };
    }
    expf_u10_steps(d)
}

/// [`expf_u10_steps`] compiled with the processor's fused multiply-add (and rounding)
/// instructions. Without them (x86-64's baseline has neither), `mul_add` and
/// `round_ties_even` are calls to the C library: the same bits, several times slower.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn expf_u10_fma(d: f32) -> f32 {
    expf_u10_steps(d)
}

/// The steps of [`expf_u10`], without a branch (each `if` picks a value, a `select` in a
/// vector lane): the loops that run it in vector lanes call it directly.
///
/// # Shapes
/// One float in, one float out.
#[inline(always)]
pub fn expf_u10_steps(d: f32) -> f32 {
    const R_LN2: f32 = f32::from_bits(0x3fb8_aa3b); // 1/ln 2
    // ln 2 split in two floats: `q·L2U` is exact for the q that occur, `L2L` adds the rest.
    const L2U: f32 = f32::from_bits(0x3f31_7200);
    const L2L: f32 = f32::from_bits(0x35bf_be8e);
    const C: [f32; 6] = [
        f32::from_bits(0x3950_2bda),
        f32::from_bits(0x3ab6_96c9),
        f32::from_bits(0x3c08_88a6),
        f32::from_bits(0x3d2a_aa7a),
        f32::from_bits(0x3e2a_aaab),
        0.5,
    ];
    // The vector instruction rounds to the nearest integer, ties to even; outside the int32
    // range (and for NaN) it gives i32::MIN, which the two tests at the end make harmless.
    let qf = (d * R_LN2).round_ties_even();
    let q = if qf.abs() < 2_147_483_648.0 {
        // Not `as i32`, which must also saturate and map NaN to 0, and so keeps a loop of
        // these steps from being turned into vector instructions.
        // SAFETY: `qf` is an integer inside the int32 range (NaN fails the test above).
        unsafe { qf.to_int_unchecked::<i32>() }
    } else {
        i32::MIN
    };
    let s = (q as f32).mul_add(-L2U, d);
    let s = (q as f32).mul_add(-L2L, s);
    // e^s ≈ 1 + s + s²·(c5 + s·(c4 + s·(...))), Horner's rule with one FMA per step.
    let u = C[0].mul_add(s, C[1]);
    let u = u.mul_add(s, C[2]);
    let u = u.mul_add(s, C[3]);
    let u = u.mul_add(s, C[4]);
    let u = u.mul_add(s, C[5]);
    let u = 1.0 + (s * s).mul_add(u, s);
    // Times 2^q, in two halves so that neither factor overflows the exponent field.
    let h = q >> 1;
    let u = u * pow2i(h) * pow2i(q.wrapping_sub(h));
    if d < -104.0 {
        0.0
    } else if d > 100.0 {
        f32::INFINITY
    } else {
        u
    }
}

/// 2^k as a float built from its exponent bits (`k + 127` shifted into place), wrapping like
/// the 32-bit integer arithmetic of the vector code.
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32) << 23)
}

/// SLEEF's `logf_u10`: ln d in float32, as PyTorch's vectorised `log_softmax` computes it.
///
/// The idea: `d = m·2^e` with `m` in [0.75, 1.5), so `ln d = e·ln 2 + ln m`, and
/// `ln m = 2·atanh(x)` with `x = (m − 1)/(m + 1)` small, a short odd series. To keep the
/// error below one ulp the sums are carried in "double-float" pairs `(hi, lo)`: `hi` is the
/// rounded value, `lo` the part rounding dropped.
///
/// # Shapes
/// One float in, one float out.
pub fn logf_u10(d: f32) -> f32 {
    // The AVX2 build's path for subnormal inputs: scale up by 2^64 first, take 64 off e.
    let (d_scaled, e_offset) = if d < f32::MIN_POSITIVE {
        (d * 18_446_744_073_709_551_616.0, 64)
    } else {
        (d, 0)
    };
    // e = the exponent of d·(4/3), so that m = d / 2^e lands in [0.75, 1.5).
    let e = exponent_of(d_scaled * f32::from_bits(0x3faa_aaab));
    let m = f32::from_bits(
        d_scaled
            .to_bits()
            .wrapping_add((e.wrapping_neg() as u32) << 23),
    );
    let e = (e - e_offset) as f32;

    // s = e·ln 2 as a pair (ln 2 itself is the pair LN2_HI + LN2_LO).
    const LN2_HI: f32 = f32::from_bits(0x3f31_7218);
    const LN2_LO: f32 = f32::from_bits(0xb102_e308);
    let s = Pair::times(LN2_HI, LN2_LO, e);
    // x = (m − 1) / (m + 1), as a pair.
    let x = Pair::sum_exact(-1.0, m).divided_by(Pair::sum_exact(1.0, m));
    let x2 = x.hi * x.hi;
    let p = f32::from_bits(0x3e9a_ff5c)
        .mul_add(x2, f32::from_bits(0x3ecc_99ca))
        .mul_add(x2, f32::from_bits(0x3f2a_aada));
    // ln m = 2x + x³·p(x²).
    let s = s.plus_pair(Pair {
        hi: 2.0 * x.hi,
        lo: 2.0 * x.lo,
    });
    let s = s.plus(x2 * x.hi * p);
    let r = s.hi + s.lo;

    if d == f32::INFINITY {
        f32::INFINITY
    } else if d < 0.0 || d.is_nan() {
        f32::NAN
    } else if d == 0.0 {
        f32::NEG_INFINITY
    } else {
        r
    }
}

/// ⌊log2 x⌋ of a normal float, read from its exponent bits.
fn exponent_of(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32 - 127
}

/// A "double-float": `hi + lo` holds about twice float32's precision.
#[derive(Clone, Copy)]
struct Pair {
    hi: f32,
    lo: f32,
}

impl Pair {
    /// `(xh + xl)·y`: the product's rounding error is recovered exactly by an FMA.
    fn times(xh: f32, xl: f32, y: f32) -> Pair {
        let hi = xh * y;
        Pair {
            hi,
            lo: xl.mul_add(y, xh.mul_add(y, -hi)),
        }
    }

    /// `x + y` for two floats of any magnitudes, with the rounding error kept in `lo`.
    fn sum_exact(x: f32, y: f32) -> Pair {
        let hi = x + y;
        let v = hi - x;
        Pair {
            hi,
            lo: (x - (hi - v)) + (y - v),
        }
    }

    /// `self / b`, one reciprocal and FMA corrections.
    fn divided_by(self, b: Pair) -> Pair {
        let t = 1.0 / b.hi;
        let hi = self.hi * t;
        let u = t.mul_add(self.hi, -hi);
        let v = (-b.lo).mul_add(t, (-b.hi).mul_add(t, 1.0));
        Pair {
            hi,
            lo: hi.mul_add(v, self.lo.mul_add(t, u)),
        }
    }

    /// `self + y` for pairs, assuming `|self| ≥ |y|`.
    fn plus_pair(self, y: Pair) -> Pair {
        let hi = self.hi + y.hi;
        Pair {
            hi,
            lo: (((self.hi - hi) + y.hi) + self.lo) + y.lo,
        }
    }

    /// `self + y` for a float, assuming `|self| ≥ |y|`.
    fn plus(self, y: f32) -> Pair {
        let hi = self.hi + y;
        Pair {
            hi,
            lo: ((self.hi - hi) + y) + self.lo,
        }
    }
}

/// The C library's `expf` (glibc 2.28 and later), as PyTorch's scalar code paths call it.
///
/// Computed in float64 and rounded once to float32, which makes it almost always the
/// correctly rounded e^x: `x·32/ln 2 = k + r` with an integer `k` and `|r| ≤ 1/2`, then
/// `e^x = 2^(k/32) · 2^(r/32)`, the first factor from a table of 32 powers of two, the
/// second a cubic polynomial.
///
/// # Shapes
/// One float in, one float out.
pub fn glibc_expf(x: f32) -> f32 {
    // 2^(i/32) for i = 0..32, correctly rounded float64 bit patterns.
    const POW2_32: [u64; 32] = [
        0x3ff0000000000000,
        0x3ff059b0d3158574,
        0x3ff0b5586cf9890f,
        0x3ff11301d0125b51,
        0x3ff172b83c7d517b,
        0x3ff1d4873168b9aa,
        0x3ff2387a6e756238,
        0x3ff29e9df51fdee1,
        0x3ff306fe0a31b715,
        0x3ff371a7373aa9cb,
        0x3ff3dea64c123422,
        0x3ff44e086061892d,
        0x3ff4bfdad5362a27,
        0x3ff5342b569d4f82,
        0x3ff5ab07dd485429,
        0x3ff6247eb03a5585,
        0x3ff6a09e667f3bcd,
        0x3ff71f75e8ec5f74,
        0x3ff7a11473eb0187,
        0x3ff82589994cce13,
        0x3ff8ace5422aa0db,
        0x3ff93737b0cdc5e5,
        0x3ff9c49182a3f090,
        0x3ffa5503b23e255d,
        0x3ffae89f995ad3ad,
        0x3ffb7f76f2fb5e47,
        0x3ffc199bdd85529c,
        0x3ffcb720dcef9069,
        0x3ffd5818dcfba487,
        0x3ffdfc97337b9b5f,
        0x3ffea4afa2a490da,
        0x3fff50765b6e4540,
    ];
    const N: f64 = 32.0;
    let inv_ln2_n = f64::from_bits(0x3ff7_1547_652b_82fe) * N;
    let c0 = f64::from_bits(0x3fac_6af8_4b91_2394) / (N * N * N);
    let c1 = f64::from_bits(0x3fce_bfce_50fa_c4f3) / (N * N);
    let c2 = f64::from_bits(0x3fe6_2e42_ff0c_52d6) / N;

    if x.is_nan() {
        return x;
    }
    if x > f32::from_bits(0x42b1_7217) {
        return f32::INFINITY; // above ln(f32::MAX)
    }
    if x < -f32::from_bits(0x42cf_f1b4) {
        return 0.0; // e^x rounds to 0 below this
    }
    let z = inv_ln2_n * f64::from(x);
    let k = z.round_ties_even();
    let r = z - k;
    // 2^(k/32) = 2^(i/32) · 2^m with k = 32m + i: the table entry, its exponent raised by m.
    let k = k as i64;
    let (m, i) = (k.div_euclid(32), k.rem_euclid(32) as usize);
    let s = f64::from_bits(POW2_32[i].wrapping_add((m as u64) << 52));
    let y = (c0 * r + c1) * (r * r) + (c2 * r + 1.0);
    (y * s) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ulp distance between two finite floats of the same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn exp_functions_stay_within_one_ulp_of_the_true_value() {
        // A sweep over the range where e^x is a normal float, against float64's exp.
        let mut x = -87.0f32;
        while x < 88.0 {
            let exact = (f64::from(x)).exp() as f32;
            assert!(ulps(expf_u10(x), exact) <= 1, "expf_u10({x})");
            assert!(ulps(glibc_expf(x), exact) <= 1, "glibc_expf({x})");
            x += 0.0137;
        }
    }

    #[test]
    fn log_stays_within_one_ulp_of_the_true_value() {
        let mut d = 1e-30f32;
        while d < 1e30 {
            let exact = (f64::from(d)).ln() as f32;
            assert!(ulps(logf_u10(d), exact) <= 1, "logf_u10({d})");
            d *= 1.0137;
        }
        let sub = f32::from_bits(0x0000_1234);
        assert!(ulps(logf_u10(sub), f64::from(sub).ln() as f32) <= 1);
    }

    #[test]
    fn special_values() {
        for exp in [expf_u10, glibc_expf] {
            assert_eq!(exp(0.0), 1.0);
            assert_eq!(exp(f32::NEG_INFINITY), 0.0);
            assert_eq!(exp(f32::INFINITY), f32::INFINITY);
            assert_eq!(exp(-200.0), 0.0);
            assert_eq!(exp(200.0), f32::INFINITY);
            assert!(exp(f32::NAN).is_nan());
            // A subnormal result is rounded, not flushed to zero.
            assert!(exp(-100.0) > 0.0 && exp(-100.0) < f32::MIN_POSITIVE);
        }
        assert_eq!(logf_u10(1.0), 0.0);
        assert_eq!(logf_u10(0.0), f32::NEG_INFINITY);
        assert_eq!(logf_u10(f32::INFINITY), f32::INFINITY);
        assert!(logf_u10(-1.0).is_nan() && logf_u10(f32::NAN).is_nan());
    }

    /// Where Rust links against glibc, `f32::exp` is the C library's `expf` itself.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_expf_is_the_c_library_expf() {
        let mut x = -110.0f32;
        while x < 90.0 {
            assert_eq!(glibc_expf(x).to_bits(), x.exp().to_bits(), "expf({x})");
            x += 0.000_731;
        }
    }
}
