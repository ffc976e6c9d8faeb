//! Version 2 of chapter 18's chunked Gated DeltaNet is within a derived bound of the
//! listing (version 1, `gated_delta_chunked`): a tolerance derived from the lengths and
//! magnitudes, for any length, sizes and chunk.

use ch15_modern_layer::gate::sigmoid;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

use attention_perf::linear::v2_chunked_delta_gemm::gated_delta_chunked_fast;
use ch18_linear_attention::chunked_delta::gated_delta_chunked;
use ch18_linear_attention::gates::{exp, l2_normalize, log_sigmoid};

/// Gated DeltaNet's inputs as the chapter draws them.
fn gated_inputs(t: usize, d: usize) -> [Tensor; 5] {
    let (q, k, v) = (randn(&[t, d]), randn(&[t, d]), randn(&[t, d]));
    let beta = sigmoid(&randn(&[t]));
    let log_alpha = log_sigmoid(&(randn(&[t]) + 3.0));
    [l2_normalize(&q), l2_normalize(&k), v, log_alpha, beta]
}

/// How far two chunked evaluations may be apart, to first order in the rounding `u = 2⁻²⁴`.
///
/// With unit-length keys and `0 < β ≤ 1`, `α ≤ 1`, a step `S ↦ α S (I − β k kᵀ)` does not
/// lengthen the state, so every state is bounded by `b_t = α_t b_{t−1} + β_t ‖v_t‖`, and
/// `B = max_t b_t` bounds every state, every corrected value `v − S k` (times `β`) and,
/// the queries being unit-length too, every output. Each number a chunk computes (an output,
/// a corrected value, the next state) is a sum of at most `m = C + d` products of such
/// numbers, so it carries an error of at most `γ_m B` (`γ_m = m·u / (1 − m·u)`); the state
/// passes its error on undiminished, so after `n = ⌈T / C⌉` chunks an output is within
/// `(n + 1) γ_m B` of the exact one, and two evaluations within twice that.
fn tolerance(v: &Tensor, alpha: &Tensor, beta: &Tensor, chunk: usize) -> f32 {
    let (t, d) = (v.size(0), v.size(1));
    let u = f32::EPSILON / 2.0;
    let m = (chunk.min(t) + d) as f32;
    let gamma = m * u / (1.0 - m * u);
    let (alpha, beta) = (alpha.to_vec(), beta.to_vec());
    let mut bound = (0.0f32, 0.0f32);
    for (i, row) in v.to_vec().chunks(d).enumerate() {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        bound.0 = alpha[i] * bound.0 + beta[i] * norm;
        bound.1 = bound.1.max(bound.0);
    }
    let chunks = t.div_ceil(chunk) as f32;
    2.0 * (chunks + 1.0) * gamma * bound.1
}

proptest! {
    #![proptest_config(quiet(64))]

    #[test]
    fn the_fast_chunked_form_is_the_listing_within_its_tolerance(
        seed in 0u64..10_000, t in 1usize..150, d in 1usize..24, chunk in 1usize..70,
    ) {
        manual_seed(seed);
        let [q, k, v, log_alpha, beta] = gated_inputs(t, d);
        let expected = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, chunk);
        let out = gated_delta_chunked_fast(&q, &k, &v, &log_alpha, &beta, chunk).unwrap();
        prop_assert_eq!(out.sizes(), expected.sizes());
        let bound = tolerance(&v, &exp(&log_alpha), &beta, chunk);
        let gap = (&out - &expected).abs().max().item();
        prop_assert!(gap <= bound, "{} from the listing, more than {}", gap, bound);
    }
}

/// At the benchmark's sizes (64 features, chunks of 64), and the bound well under the
/// outputs' size.
#[test]
fn the_fast_chunked_form_agrees_at_the_benchmarks_sizes() {
    manual_seed(4);
    let [q, k, v, log_alpha, beta] = gated_inputs(700, 64);
    let expected = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, 64);
    let out = gated_delta_chunked_fast(&q, &k, &v, &log_alpha, &beta, 64).unwrap();
    let gap = (&out - &expected).abs().max().item();
    let bound = tolerance(&v, &exp(&log_alpha), &beta, 64);
    assert!(gap <= bound, "{gap} from the listing, more than {bound}");
    assert!(
        bound < 0.1 * expected.abs().max().item(),
        "the bound {bound} says little"
    );
}
