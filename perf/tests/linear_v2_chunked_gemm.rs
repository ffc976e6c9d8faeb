//! Version 2 of chapter 18's chunked linear attention is within a derived bound of the
//! listing (version 1, `linear_chunked`): a tolerance derived from the lengths and
//! magnitudes, for any length, sizes and chunk.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

use attention_perf::linear::v2_chunked_gemm::linear_chunked_fast;
use ch18_linear_attention::chunked::linear_chunked;

/// How far two evaluations of causal linear attention may be apart, for `T` tokens of `d`
/// features and values `v`.
///
/// Output `i` is `N / D` with `N = Σ_j w_j v_j`, `D = Σ_j w_j` and every weight
/// `w_j = φ(q_i)·φ(k_j)` positive. However the sums are ordered (chunks, state, GEMM),
/// each term passes through at most `m = d + T + 2` roundings of a sum of positive products
/// (the fast form's feature map, within 1 ulp of the listing's, adds one to each factor),
/// so with `u = 2⁻²⁴` and `γ_m = m·u / (1 − m·u)`, `|N̂ − N| ≤ γ_m Σ_j w_j |v_j| ≤ γ_m D V`
/// (`V = max |v|`) and `|D̂ − D| ≤ γ_m D`. Then `|N̂/D̂ − N/D| ≤ 2 γ_m V / (1 − γ_m)`, plus
/// `u V` for the division; two evaluations are at most twice that apart.
fn tolerance(t: usize, d: usize, v: &Tensor) -> f32 {
    let u = f32::EPSILON / 2.0;
    let m = (d + t + 2) as f32;
    let gamma = m * u / (1.0 - m * u);
    2.0 * (2.0 * gamma / (1.0 - gamma) + u) * v.abs().max().item()
}

proptest! {
    #![proptest_config(quiet(64))]

    #[test]
    fn the_fast_chunked_form_is_the_listing_within_its_tolerance(
        seed in 0u64..10_000, t in 1usize..200, d in 1usize..40, d_v in 1usize..40,
        chunk in 1usize..80,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, d]), randn(&[t, d]), randn(&[t, d_v]));
        let expected = linear_chunked(&q, &k, &v, chunk);
        let out = linear_chunked_fast(&q, &k, &v, chunk).unwrap();
        prop_assert_eq!(out.sizes(), expected.sizes());
        let (gap, bound) = ((&out - &expected).abs().max().item(), tolerance(t, d, &v));
        prop_assert!(gap <= bound, "{} from the listing, more than {}", gap, bound);
    }
}

/// At the benchmark's sizes (64 features, chunks of 64) and a length of several chunks.
#[test]
fn the_fast_chunked_form_agrees_at_the_benchmarks_sizes() {
    manual_seed(9);
    let t = 1000;
    let (q, k, v) = (randn(&[t, 64]), randn(&[t, 64]), randn(&[t, 64]));
    let expected = linear_chunked(&q, &k, &v, 64);
    let gap = (&linear_chunked_fast(&q, &k, &v, 64).unwrap() - &expected)
        .abs()
        .max()
        .item();
    let bound = tolerance(t, 64, &v);
    assert!(gap <= bound, "{gap} from the listing, more than {bound}");
}

/// Shapes that do not fit, and a chunk of 0, are errors that name the operation and the
/// shapes, in both fast chunked forms.
#[test]
fn bad_shapes_are_errors_naming_the_operation() {
    use attention_perf::linear::v2_chunked_delta_gemm::gated_delta_chunked_fast;
    let (q, k, v) = (randn(&[6, 4]), randn(&[6, 4]), randn(&[6, 3]));
    let (gates, beta) = (randn(&[6]), randn(&[6]));
    for (result, op) in [
        (
            linear_chunked_fast(&q, &randn(&[5, 4]), &v, 2),
            "linear_chunked_fast",
        ),
        (linear_chunked_fast(&q, &k, &v, 0), "linear_chunked_fast"),
        (
            linear_chunked_fast(&randn(&[2, 6, 4]), &k, &v, 2),
            "linear_chunked_fast",
        ),
        (
            gated_delta_chunked_fast(&q, &k, &v, &randn(&[5]), &beta, 2),
            "gated_delta_chunked_fast",
        ),
        (
            gated_delta_chunked_fast(&q, &k, &randn(&[7, 3]), &gates, &beta, 2),
            "gated_delta_chunked_fast",
        ),
    ] {
        let message = result.unwrap_err().to_string();
        assert!(
            message.contains(op) && message.contains("[6, 4]"),
            "{message}"
        );
    }
}
