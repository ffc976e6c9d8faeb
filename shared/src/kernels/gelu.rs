//! The per-element formulas behind PyTorch's GELU, each exactly as the kernel that computes
//! it rounds: one `f32` rounding per operation, `mul_add` where the kernel uses a fused
//! multiply-add. Three families meet here:
//!
//! * SLEEF's `tanhf` and `expf` (1-ulp versions), which ATen's own vectorised kernels use;
//!   both work with "double-float" pairs `(hi, lo)` whose sum carries about 48 bits;
//! * oneDNN's two `erf`-based GELU kernels, one for CPUs with AVX-512 (24 polynomial pieces)
//!   and one for the others (Abramowitz and Stegun's formula 7.1.26 with oneDNN's `exp`);
//! * ATen's vectorised `erf` (the same Abramowitz–Stegun formula around SLEEF's `expf`).
//!
//! The constants are written digit for digit as SLEEF and ATen write them (more digits than
//! an `f32` holds, and `1.442695` rather than `LOG2_E`), so they can be checked against
//! those sources; each rounds to the very float the kernels use.
//!
//! Measured against PyTorch 2.13.0's `gelu` on its AVX-512 and AVX2 builds
//! (`tests/fixtures/norm_fixtures.json`), bit for bit.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

use super::elementwise::{in_ranges, ranges};
use super::parallel::GRAIN;

/// `2^q` for `q` in the normal exponent range, built from the exponent bits.
#[inline(always)]
fn pow2i(q: i32) -> f32 {
    f32::from_bits(((q + 127) as u32) << 23)
}

/// `d · 2^q` in two steps, so that `q` may reach twice the exponent range without overflow.
#[inline(always)]
fn ldexp2(d: f32, q: i32) -> f32 {
    d * pow2i(q >> 1) * pow2i(q - (q >> 1))
}

/// A double-float number `hi + lo`, with `|lo|` below half an ulp of `hi`.
#[derive(Clone, Copy)]
struct Df {
    hi: f32,
    lo: f32,
}

impl Df {
    #[inline(always)]
    fn neg(self) -> Df {
        Df {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    /// `self + y` for any magnitudes (SLEEF's `dfadd2_vf2_vf2_vf`).
    #[inline(always)]
    fn add2_f(self, y: f32) -> Df {
        let hi = self.hi + y;
        let v = hi - self.hi;
        let lo = ((self.hi - (hi - v)) + (y - v)) + self.lo;
        Df { hi, lo }
    }

    /// `self + y` for any magnitudes, both double-float (`dfadd2_vf2_vf2_vf2`).
    #[inline(always)]
    fn add2(self, y: Df) -> Df {
        let hi = self.hi + y.hi;
        let v = hi - self.hi;
        let lo = ((self.hi - (hi - v)) + (y.hi - v)) + (self.lo + y.lo);
        Df { hi, lo }
    }

    /// `self + y` when `|self| >= |y|` (`dfadd_vf2_vf2_vf2`).
    #[inline(always)]
    fn add(self, y: Df) -> Df {
        let hi = self.hi + y.hi;
        let lo = (((self.hi - hi) + y.hi) + self.lo) + y.lo;
        Df { hi, lo }
    }

    /// `self · y` for a plain float `y`; the fused multiply-add recovers the product's
    /// rounding error exactly.
    #[inline(always)]
    fn mul_f(self, y: f32) -> Df {
        let hi = self.hi * y;
        let lo = self.lo.mul_add(y, self.hi.mul_add(y, -hi));
        Df { hi, lo }
    }

    /// `self · y`, both double-float.
    #[inline(always)]
    fn mul(self, y: Df) -> Df {
        let hi = self.hi * y.hi;
        let lo = self
            .hi
            .mul_add(y.lo, self.lo.mul_add(y.hi, self.hi.mul_add(y.hi, -hi)));
        Df { hi, lo }
    }

    /// `self²`.
    #[inline(always)]
    fn square(self) -> Df {
        let hi = self.hi * self.hi;
        let lo = (self.hi + self.hi).mul_add(self.lo, self.hi.mul_add(self.hi, -hi));
        Df { hi, lo }
    }

    /// `1 / self`.
    #[inline(always)]
    fn recip(self) -> Df {
        let hi = 1.0 / self.hi;
        let lo = hi * (-self.lo).mul_add(hi, (-self.hi).mul_add(hi, 1.0));
        Df { hi, lo }
    }

    /// `self / m`.
    #[inline(always)]
    fn div(self, m: Df) -> Df {
        let r = 1.0 / m.hi;
        let hi = self.hi * r;
        let u = r.mul_add(self.hi, -hi);
        let lo = (-m.lo).mul_add(r, (-m.hi).mul_add(r, 1.0));
        let lo = hi.mul_add(lo, self.lo.mul_add(r, u));
        Df { hi, lo }
    }
}

/// `1 / ln 2`, and `ln 2` split in a high part with few mantissa bits (so `q · LN2_HI` is
/// exact) and the rest.
const LOG2_E: f32 = 1.442695;
const LN2_HI: f32 = 0.693145751953125;
const LN2_LO: f32 = 1.428606765330187e-06;

/// `e^a` as a double-float for `a >= 0` (SLEEF's `expk2f`): `a = q·ln 2 + s`, a polynomial
/// for `e^s`, then the scale `2^q`.
#[inline(always)]
fn exp_df(a: f32) -> Df {
    let q = (a * LOG2_E).round_ties_even() as i32;
    let qf = q as f32;
    let s = Df { hi: a, lo: 0.0 }
        .add2_f(qf * -LN2_HI)
        .add2_f(qf * -LN2_LO);
    let p = 0.1980960224e-3f32;
    let p = p.mul_add(s.hi, 0.1394256484e-2);
    let p = p.mul_add(s.hi, 0.8333456703e-2);
    let p = p.mul_add(s.hi, 0.4166637361e-1);
    let t = s.mul_f(p).add2_f(0.166666659414234244790680580464);
    let t = s.mul(t).add2_f(0.5);
    let t = s.add2(s.square().mul(t));
    let one_plus = 1.0 + t.hi;
    let t = Df {
        hi: one_plus,
        lo: ((1.0 - one_plus) + t.hi) + t.lo,
    };
    Df {
        hi: ldexp2(t.hi, q),
        lo: ldexp2(t.lo, q),
    }
}

/// SLEEF's `tanhf` (1-ulp version): `(e^a − e^−a) / (e^a + e^−a)` in double-float
/// arithmetic, `a = |x|`, then the sign of `x`.
pub fn sleef_tanhf(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let d = exp_df(x.abs());
    let e = d.recip();
    let q = d.add(e.neg()).div(d.add(e));
    let mut y = q.hi + q.lo;
    // Past 8.66 the answer rounds to 1 (and the exponential may have overflowed).
    if x.abs() > 8.664339742 || y.is_nan() {
        y = 1.0;
    }
    y.copysign(x)
}

/// [`sleef_tanhf`] without a branch, for vector lanes: the same operations in the same
/// order, every lane computing all of them, and a choice of value (a `select` in each
/// lane) where the scalar port returns early or overrides. The same bits for every `x`.
///
/// # Shapes
/// One float in, one float out.
#[inline(always)]
pub fn sleef_tanhf_branch_free(x: f32) -> f32 {
    let a = x.abs();
    let d = exp_df(a);
    let e = d.recip();
    let q = d.add(e.neg()).div(d.add(e));
    let y = q.hi + q.lo;
    let y = if a > 8.664339742 || y.is_nan() {
        1.0
    } else {
        y
    };
    if x.is_nan() { x } else { y.copysign(x) }
}

/// SLEEF's `expf` (1-ulp version), in single-float arithmetic.
pub(crate) fn sleef_expf(d: f32) -> f32 {
    let q = (d * LOG2_E).round_ties_even() as i32;
    let qf = q as f32;
    let s = qf.mul_add(-LN2_HI, d);
    let s = qf.mul_add(-LN2_LO, s);
    let mut u = 1.98527617612853646278381e-4f32;
    for c in [
        1.39304355252534151077271e-3,
        8.33336077630519866943359e-3,
        4.16664853692054748535156e-2,
        1.66666671633720397949219e-1,
        0.5,
    ] {
        u = u.mul_add(s, c);
    }
    let u = 1.0 + (s * s).mul_add(u, s);
    if d < -104.0 {
        0.0
    } else if d > 100.0 {
        f32::INFINITY
    } else {
        ldexp2(u, q)
    }
}

/// Abramowitz and Stegun's constants (formula 7.1.26): `erf(z) ≈ 1 − t·P(t)·e^(−z²)` with
/// `t = 1 / (1 + p·|z|)`. ATen writes them in decimal, oneDNN as bit patterns; both round
/// to the same floats.
const AS_P: f32 = 0.3275911;
const AS_A: [f32; 5] = [
    0.254829592,
    -0.284496736,
    1.421413741,
    -1.453152027,
    1.061405429,
];

/// `1/√2`, the scale inside `erf(x / √2)`.
const FRAC_1_SQRT_2: f32 = 0.70710677;

/// ATen's vectorised `erf` (formula 7.1.26 around SLEEF's `expf`).
fn aten_erf(z: f32) -> f32 {
    let t = 1.0 / AS_P.mul_add(z.abs(), 1.0);
    let r = AS_A[4]
        .mul_add(t, AS_A[3])
        .mul_add(t, AS_A[2])
        .mul_add(t, AS_A[1])
        .mul_add(t, AS_A[0]);
    let e = sleef_expf(-(z * z));
    ((-e) * t).mul_add(r, 1.0).copysign(z)
}

// The C library's `erff`. Rust's standard library has no `erf`, but on Linux it links the
// C maths library anyway, so the very function ATen calls on its scalar tail is there to
// declare; it has no preconditions, hence `safe`.
unsafe extern "C" {
    safe fn erff(x: f32) -> f32;
}

/// ATen's native GELU on a whole vector block: `(x·0.5)·(1 + erf(x/√2))` with ATen's erf.
pub(crate) fn gelu_erf_aten_vector(x: f32) -> f32 {
    (x * 0.5) * (1.0 + aten_erf(x * FRAC_1_SQRT_2))
}

/// ATen's native GELU on the scalar tail: the same formula with the C library's `erff`.
pub(crate) fn gelu_erf_aten_scalar(x: f32) -> f32 {
    (x * 0.5) * (1.0 + erff(x * FRAC_1_SQRT_2))
}

/// `β = √(2/π)` and `κ = 0.044715` of the tanh approximation, as ATen rounds them.
const GELU_BETA: f32 = 0.7978846;
const GELU_KAPPA: f32 = 0.044715;

/// The tanh approximation `0.5·x·(1 + tanh(β·(x + κ·x³)))`, with the `tanh` the caller
/// passes (SLEEF's on vector blocks, the C library's on the tail). The compiler fused
/// `x + κ·x³` into one multiply-add in both of ATen's loops.
#[inline(always)]
pub(crate) fn gelu_tanh_with(x: f32, tanh: impl Fn(f32) -> f32) -> f32 {
    let cube = (x * x) * x;
    let inner = GELU_BETA * GELU_KAPPA.mul_add(cube, x);
    (0.5 * x) * (1.0 + tanh(inner))
}

/// oneDNN's exp inside its AVX2 GELU: clamp, `2^f · e^r` with `|r| <= ln 2 / 2`, the
/// power of two built as `2^(f−1)` and doubled at the end.
fn onednn_exp(v: f32) -> f32 {
    const LO: f32 = -87.33655;
    const HI: f32 = 88.72284;
    let under = v < LO;
    let v = v.clamp(LO, HI);
    let f = (v * LOG2_E + 0.5).floor();
    let r = (-f).mul_add(0.6931472, v);
    let s = if under { 0.0 } else { pow2i(f as i32 - 1) };
    let mut p = f32::from_bits(0x3C07CFCE);
    for c in [0x3D2B9D0D, 0x3E2AAD40, 0x3EFFFEE3, 0x3F7FFFFB] {
        p = p.mul_add(r, f32::from_bits(c));
    }
    let p = p.mul_add(r, 1.0);
    (p * s) * 2.0
}

/// oneDNN's GELU on CPUs without AVX-512: formula 7.1.26 for `erf(x/√2)`, then
/// `y = S + S·erf` with `S = x/2`.
pub(crate) fn gelu_erf_onednn_avx2(x: f32) -> f32 {
    let z = x * FRAC_1_SQRT_2;
    let t = 1.0 / AS_P.mul_add(z.abs(), 1.0);
    let q = -onednn_exp(-(z * z)) * t;
    let r = AS_A[4]
        .mul_add(t, AS_A[3])
        .mul_add(t, AS_A[2])
        .mul_add(t, AS_A[1])
        .mul_add(t, AS_A[0]);
    let e = q.mul_add(r, 1.0);
    let e = if x.is_sign_negative() { -e } else { e };
    let s = x * 0.5;
    e.mul_add(s, s)
}

/// The AVX-512 kernel's pieces: coefficients `C0..C5` of a quintic in `a = |x|` for
/// `erf(a/√2)`, one row per quarter octave of `a` (rows 1 to 22), then `erf = 1` past
/// 5.542594 (row 23) and a row that only NaN reaches (24).
const ERF_PIECES: [[u32; 6]; 24] = [
    [
        0x32827792, 0x3F4C421F, 0x3735E4CF, 0xBE084570, 0x39F097A3, 0x3C9B6050,
    ],
    [
        0x3381CC0C, 0x3F4C4207, 0x37F2FF89, 0xBE08639B, 0x3A5845DC, 0x3C978D11,
    ],
    [
        0x34523D4A, 0x3F4C41CB, 0x388C23BE, 0xBE089837, 0x3AB1FA35, 0x3C92E850,
    ],
    [
        0x351AC44D, 0x3F4C413B, 0x3917535C, 0xBE08F409, 0x3B0CEFB8, 0x3C8D058B,
    ],
    [
        0x35F36D88, 0x3F4C3FAD, 0x39AB2AB0, 0xBE09AB95, 0x3B653AB6, 0x3C848454,
    ],
    [
        0x36EE8229, 0x3F4C3A2F, 0x3A60FADB, 0xBE0B66D0, 0x3BCAE527, 0x3C6CD623,
    ],
    [
        0x37B8A3BB, 0x3F4C2D40, 0x3AF9B960, 0xBE0E400A, 0x3C221712, 0x3C4C824B,
    ],
    [
        0x3867A213, 0x3F4C146A, 0x3B6E5491, 0xBE124DF8, 0x3C6C5840, 0x3C2A7935,
    ],
    [
        0x3940033B, 0x3F4BC341, 0x3C0A4EC5, 0xBE1BDE02, 0x3CC0A703, 0x3BE0B390,
    ],
    [
        0x3A2A5A1D, 0x3F4AD08C, 0x3CA5AA8C, 0xBE2F19C9, 0x3D1DCC19, 0x3B0651AC,
    ],
    [
        0x3AE35863, 0x3F48F8CF, 0x3D2138D9, 0xBE4931BF, 0x3D63656D, 0xBB232F53,
    ],
    [
        0x3B7828F2, 0x3F45FAC7, 0x3D8737D4, 0xBE685FBC, 0x3D955907, 0xBBD42FA0,
    ],
    [
        0x3C08B14B, 0x3F404E07, 0x3DDFB660, 0xBE89C95F, 0x3DBF9910, 0xBC2C5366,
    ],
    [
        0x3C515ED3, 0x3F3B980F, 0x3E0F27AB, 0xBE96CBCA, 0x3DD53F69, 0xBC492C9E,
    ],
    [
        0xBB503236, 0x3F48DFF3, 0x3D94004B, 0xBE8044AA, 0x3DB7DCEF, 0xBC2A7AA6,
    ],
    [
        0xBD8D8E5E, 0x3F78B21B, 0xBE0EFDEB, 0xBE0550F2, 0x3D639EBE, 0xBBD55D04,
    ],
    [
        0xBE8ABCD9, 0x3FBB0704, 0xBF1D96C3, 0x3DCFD6A1, 0xBA6EDE48, 0xBA823A76,
    ],
    [
        0xBF0C19A2, 0x40019C32, 0xBF89DB58, 0x3E94C826, 0xBD22BE69, 0x3B102AA8,
    ],
    [
        0xBECCB328, 0x3FE536D6, 0xBF6D9897, 0x3E79345F, 0xBD041CF1, 0x3AE25A7E,
    ],
    [
        0x3E176CED, 0x3F81331E, 0xBEF69FB8, 0x3DECEC91, 0xBC64F5AB, 0x3A31F792,
    ],
    [
        0x3F470D99, 0x3E6C8684, 0xBDC4F8A8, 0x3CA46568, 0xBB097A32, 0x38B84375,
    ],
    [
        0x3F7ABB28, 0x3C98F936, 0xBBDE6422, 0x3AA1E00A, 0xB8EBF380, 0x3689BB5A,
    ],
    [
        0x3F800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    ],
    [
        0x00000000, 0x3F800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    ],
];

/// oneDNN's GELU on CPUs with AVX-512: `erf(|x|/√2)` from the piece that `|x|` falls in,
/// then `y = (x·(1 + erf))·0.5`.
pub(crate) fn gelu_erf_onednn_avx512(x: f32) -> f32 {
    let a = x.abs();
    // The piece index from the bits of `a`: subtracting 0x3DE00001 and keeping the bits
    // above the top two mantissa bits counts quarter octaves from 0.15625 upwards.
    let index = ((a.to_bits().wrapping_add(0xC21F_FFFF) as i32) >> 21).clamp(1, 24);
    let index = if a > f32::from_bits(0x40B1_5CEE) {
        23
    } else {
        index
    };
    let c = ERF_PIECES[index as usize - 1].map(f32::from_bits);
    let p = c[5]
        .mul_add(a, c[4])
        .mul_add(a, c[3])
        .mul_add(a, c[2])
        .mul_add(a, c[1])
        .mul_add(a, c[0]);
    let erf = if x.is_sign_negative() { -p } else { p };
    (x * (erf + 1.0)) * 0.5
}

/// The vector width GELU's kernels run at, from the CPU build this crate follows
/// ([`crate::cpu::capability`]): AVX-512 (16 floats, and oneDNN's piecewise kernel for the
/// `"none"` form) or AVX2 (8 floats, oneDNN's Abramowitz–Stegun kernel). PyTorch lets oneDNN
/// choose on its own (`ONEDNN_MAX_CPU_ISA`); here one setting decides both, so a machine
/// follows one build throughout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    /// 256-bit vectors, 8 floats (the AVX2 build, and the portable one).
    Avx2,
    /// 512-bit vectors, 16 floats.
    Avx512,
}

impl Width {
    /// The width of the CPU build in use.
    pub(crate) fn current() -> Width {
        match crate::cpu::capability() {
            crate::cpu::Capability::Avx512 => Width::Avx512,
            crate::cpu::Capability::Avx2 | crate::cpu::Capability::Default => {
                Width::Avx2
            }
        }
    }

    /// Floats per vector register.
    pub(crate) fn lanes(self) -> usize {
        match self {
            Width::Avx2 => 8,
            Width::Avx512 => 16,
        }
    }
}

/// GELU's own threading rule: above 16384 elements every thread gets a range (smaller
/// tensors stay in one range unless they exceed ATen's usual grain of 32768).
pub fn gelu_ranges(n: usize, threads: usize) -> Vec<std::ops::Range<usize>> {
    const GELU_MIN_ELEMENTS_FOR_THREADS: usize = 16384;
    let grain = if n > GELU_MIN_ELEMENTS_FOR_THREADS {
        (n / threads.max(1)).max(1)
    } else {
        GRAIN
    };
    ranges(n, threads, grain)
}

/// ATen's native GELU kernel on values laid out as it walks them (`runs`: the contiguous
/// runs of memory it hands to its inner loop): `vector` on whole blocks of two vectors,
/// `scalar` on each range's tail (see [`super::elementwise`]).
pub(crate) fn aten_gelu(
    values: &mut [f32],
    runs: usize,
    isa: Width,
    threads: usize,
    vector: impl Fn(f32) -> f32 + Sync + Copy,
    scalar: impl Fn(f32) -> f32 + Sync + Copy,
) {
    let block = 2 * isa.lanes();
    let run_len = values.len() / runs.max(1);
    let ranges: Vec<_> = if runs == 1 {
        gelu_ranges(values.len(), threads)
    } else {
        (0..runs).map(|r| r * run_len..(r + 1) * run_len).collect()
    };
    in_ranges(values, &ranges, block, vector, scalar);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::lanes::map_in_lanes;
    use proptest::prelude::*;

    /// Where the tanh's steps change course, with both signs: zeros, the smallest floats,
    /// the arguments where `exp_df`'s `q` steps up (`|x|·log₂e` half-way between two
    /// integers) and the floats beside them, the cut-off past which the answer is 1 and the
    /// floats beside it, where the exponential overflows, and the special values (NaNs with
    /// payloads among them).
    fn edge_cases() -> Vec<f32> {
        let mut magnitudes = vec![
            0.0,
            f32::from_bits(1),
            f32::MIN_POSITIVE,
            1e-20,
            1e-7,
            0.5,
            1.0,
            9.0,
            20.0,
            88.0,
            89.0,
            1e10,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            f32::from_bits(0x7FC0_1234),
            f32::from_bits(0x7F80_0001),
        ];
        for k in 0..16 {
            let step = (k as f32 + 0.5) / LOG2_E;
            magnitudes.extend([step.next_down(), step, step.next_up()]);
        }
        let cut = 8.664339742f32;
        magnitudes.extend([cut.next_down(), cut, cut.next_up()]);
        magnitudes.iter().flat_map(|&m| [m, -m]).collect()
    }

    /// The branch-free tanh of each of `xs` in the vector loop (compiled for this
    /// processor's vectors and fused multiply-adds), against the scalar port, bit for bit;
    /// and GELU's tanh form around each.
    fn check_lanes_against_the_scalar_port(xs: &[f32]) -> Result<(), TestCaseError> {
        let mut tanh = xs.to_vec();
        map_in_lanes(&mut tanh, sleef_tanhf_branch_free);
        let mut gelu = xs.to_vec();
        map_in_lanes(
            &mut gelu,
            #[inline(always)]
            |x| gelu_tanh_with(x, sleef_tanhf_branch_free),
        );
        for ((&x, t), g) in xs.iter().zip(tanh).zip(gelu) {
            let bits = x.to_bits();
            prop_assert_eq!(
                t.to_bits(),
                sleef_tanhf(x).to_bits(),
                "tanh({:e}) [{:#x}]",
                x,
                bits
            );
            let expected = gelu_tanh_with(x, sleef_tanhf);
            prop_assert_eq!(
                g.to_bits(),
                expected.to_bits(),
                "gelu({:e}) [{:#x}]",
                x,
                bits
            );
            let one = sleef_tanhf_branch_free(x);
            prop_assert_eq!(one.to_bits(), t.to_bits(), "one at a time, {:e}", x);
        }
        Ok(())
    }

    #[test]
    fn the_lanes_tanh_is_the_scalar_port_at_the_edges() -> Result<(), TestCaseError> {
        check_lanes_against_the_scalar_port(&edge_cases())
    }

    #[test]
    fn the_lanes_tanh_is_the_scalar_port_across_all_floats()
    -> Result<(), TestCaseError> {
        // One bit pattern in 1009: every exponent, both signs, NaNs and infinities.
        let xs: Vec<f32> = (0..=u32::MAX / 1009)
            .map(|k| f32::from_bits(k * 1009))
            .collect();
        check_lanes_against_the_scalar_port(&xs)
    }

    proptest! {
        #[test]
        fn the_lanes_tanh_is_the_scalar_port(
            bits in prop::collection::vec(any::<u32>(), 0..70),
            near in prop::collection::vec(-12.0f32..12.0, 0..70),
            edges in prop::collection::vec(prop::sample::select(edge_cases()), 0..40),
        ) {
            let any: Vec<f32> = bits.into_iter().map(f32::from_bits).collect();
            check_lanes_against_the_scalar_port(&any)?;
            check_lanes_against_the_scalar_port(&near)?;
            check_lanes_against_the_scalar_port(&edges)?;
        }
    }

    #[test]
    fn ranges_follow_the_thread_split() {
        assert_eq!(gelu_ranges(16384, 2), vec![0..16384]);
        assert_eq!(gelu_ranges(16385, 2), vec![0..8193, 8193..16385]);
        assert_eq!(gelu_ranges(20001, 1), vec![0..20001]);
        assert_eq!(gelu_ranges(0, 2), Vec::<std::ops::Range<usize>>::new());
    }
}
