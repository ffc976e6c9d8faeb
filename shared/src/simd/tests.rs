//! The tokens' operations checked lane by lane: `exp2_flushed` against `2ˣ` and the
//! scalar function, the comparisons and the pair operations against their definitions.

#[cfg(target_arch = "x86_64")]
use super::{Avx2, Avx512};
use super::{FLUSH_BELOW, Portable, Simd, exp2_flushed_scalar};

/// How far `got` is from the true `2ˣ`, in units of the `f32` spacing there (`0` for a
/// correct `+∞`).
fn exp2_error_ulps(x: f32, got: f32) -> f64 {
    let exact = f64::from(x).exp2();
    if exact > f64::from(f32::MAX) {
        return if got == f32::INFINITY {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let at = exact as f32;
    let ulp = f64::from(f32::from_bits(at.to_bits() + 1)) - f64::from(at);
    (f64::from(got) - exact).abs() / ulp
}

/// `f` on each lane of a vector loaded from the first `S::LANES` floats of a slice.
fn lanes<S: Simd>(s: S, f: impl Fn(S, S::V) -> S::V) -> impl Fn(&[f32]) -> Vec<f32> {
    move |c| {
        let mut out = vec![0.0; S::LANES];
        s.store(f(s, s.load(c)), &mut out);
        out
    }
}

#[test]
fn exp2_flushed_is_two_to_the_x_or_zero_never_subnormal() {
    let xs: Vec<f32> = (0..48_000)
        .map(|i| -130.0 + 260.0 * i as f32 / 48_000.0)
        .chain((-130..=130).map(|i| i as f32))
        .chain([
            f32::NEG_INFINITY,
            f32::INFINITY,
            -0.0,
            FLUSH_BELOW,
            -126.000_01,
            -125.5,
            -0.5,
            0.5,
            127.5,
            127.99,
            200.0,
            -200.0,
            1e-8,
            -1e-8,
        ])
        .chain([f32::NAN; 16])
        .collect();
    // Each lane: NaN for NaN, 0 below the limit; from it on a normal number within 2 ulp
    // of 2ˣ (exactly 2ˣ for a whole x), or +∞; `bit_exact`: the scalar function's bits.
    let check = |lanes: usize, bit_exact: bool, exp2: &dyn Fn(&[f32]) -> Vec<f32>| {
        for chunk in xs.chunks_exact(lanes) {
            for (&x, &y) in chunk.iter().zip(&exp2(chunk)) {
                if x.is_nan() {
                    assert!(y.is_nan(), "exp2_flushed(NaN) = {y}");
                    continue;
                }
                if x < FLUSH_BELOW {
                    assert_eq!(y.to_bits(), 0, "exp2_flushed({x})");
                    continue;
                }
                assert!(exp2_error_ulps(x, y) <= 2.0, "exp2_flushed({x}) = {y}");
                assert!(y >= f32::MIN_POSITIVE, "exp2_flushed({x}) = {y}");
                if x.fract() == 0.0 && x < 128.0 {
                    assert_eq!(
                        f64::from(y),
                        f64::from(x).exp2(),
                        "exp2_flushed({x})"
                    );
                }
                if bit_exact {
                    assert_eq!(y.to_bits(), exp2_flushed_scalar(x).to_bits(), "{x}");
                }
            }
        }
    };
    check(1, true, &|c| vec![exp2_flushed_scalar(c[0])]);
    check(4, true, &lanes(Portable, Portable::exp2_flushed));
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(s) = Avx512::detect() {
            check(16, false, &lanes(s, Avx512::exp2_flushed));
        }
        if let Some(s) = Avx2::detect() {
            check(8, true, &lanes(s, Avx2::exp2_flushed));
        }
    }
}

#[test]
fn any_greater_looks_at_every_lane() {
    // `x` larger than every lane but one, at each position in turn, and equal to it.
    fn check<S: Simd>(s: S) {
        for at in 0..S::LANES {
            let mut v = vec![-1.0f32; S::LANES];
            v[at] = 2.0;
            let v = s.load(&v);
            assert!(s.any_greater(v, 1.5), "lane {at}");
            assert!(!s.any_greater(v, 2.0), "lane {at}");
            assert!(s.any_greater(v, f32::NEG_INFINITY), "lane {at}");
        }
        let nan = s.splat(f32::NAN);
        assert!(!s.any_greater(nan, 0.0));
    }
    check(Portable);
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(s) = Avx512::detect() {
            check(s);
        }
        if let Some(s) = Avx2::detect() {
            check(s);
        }
    }
}

/// Runs `check` with every token this CPU has.
macro_rules! for_every_token {
    ($check:ident) => {
        $check(Portable);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(s) = Avx512::detect() {
                $check(s);
            }
            if let Some(s) = Avx2::detect() {
                $check(s);
            }
        }
    };
}

#[test]
fn pair_operations_follow_their_definitions() {
    fn check<S: Simd>(s: S) {
        let n = S::LANES;
        let a: Vec<f32> = (0..n).map(|i| (i * i) as f32 + 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 100.0 - i as f32 * 3.25).collect();
        let store = |v: S::V| {
            let mut out = vec![0.0; n];
            s.store(v, &mut out);
            out
        };
        let pair = store(s.splat_pair(&[7.0, -2.0]));
        let expected: Vec<f32> = (0..n).map(|i| [7.0, -2.0][i % 2]).collect();
        assert_eq!(pair, expected, "splat_pair, {n} lanes");
        let sums = store(s.add_pairs(s.load(&a), s.load(&b)));
        let swapped = store(s.swap_keys(s.load(&a)));
        for g in (0..n).step_by(4) {
            assert_eq!(
                sums[g..g + 4],
                [
                    a[g] + a[g + 1],
                    a[g + 2] + a[g + 3],
                    b[g] + b[g + 1],
                    b[g + 2] + b[g + 3]
                ],
                "add_pairs, {n} lanes, group at {g}"
            );
            assert_eq!(
                swapped[g..g + 4],
                [a[g + 2], a[g + 3], a[g], a[g + 1]],
                "swap_keys, {n} lanes, group at {g}"
            );
        }
    }
    for_every_token!(check);
}
