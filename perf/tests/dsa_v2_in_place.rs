//! Version 2 of chapter 18's DSA kernel against the listing (version 1, `dsa_kernel`): the
//! same keys, outputs within a derived bound. Its selection by bits keeps the keys
//! `keep_top_k` keeps (ties and signed zeros included), its index scores are the listing's
//! bit for bit, so it keeps the same keys, and its outputs agree with `dsa_kernel`'s within
//! a tolerance derived from the sizes and magnitudes, on every instruction set this
//! processor runs; bad shapes are errors that name it.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::simd::Isa;
use shared::{Tensor, manual_seed, randn};

use attention_perf::dsa::top_k_radix::RadixTopK;
use attention_perf::dsa::v2_in_place::{
    IndexInputs, dsa_kernel_fast, dsa_kernel_fast_with, index_scores_into,
};
use ch18_linear_attention::sparse_kernel::{
    Indexer, dsa_kernel, index_scores_of_tile, keep_top_k,
};

/// The instruction sets this processor can run.
fn isas() -> Vec<Isa> {
    [Isa::Avx512, Isa::Avx2, Isa::Portable]
        .into_iter()
        .filter(|isa| isa.is_available())
        .collect()
}

/// `Σ_p |a_p| · |b_p|`.
fn abs_dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x * y).abs()).sum()
}

/// How far the fast kernel's output may be from the listing's, both over the same kept
/// keys, for queries `q` `[T, heads, d]`, keys `k` `[T, d]`, values `v` `[T, d_v]` and at
/// most `n` kept keys per query.
///
/// With `u = 2⁻²⁴` and `γ_m = m·u / (1 − m·u)`: each kernel's score in base 2 (the query
/// scaled by `c = log₂ e / √d`, one rounding, then `d` products added) is within
/// `γ_{d+1} · c · Σ_p |q_p k_p| ≤ γ_{d+1} · c · A` of the exact one, `A` the largest such
/// sum, so the two differ by at most `δ = 2 γ_{d+1} c A`. Subtracting the row's maximum
/// rounds once more, by at most `u · R` with `R = 2 c A` the widest span of scores, on each
/// side, and each `2ˣ` is within 2 ulp: every weight of one kernel is the other's times
/// `2^ε` with `|ε| ≤ δ + 2uR`, plus `4u` relative. A relative change `η` of every weight moves
/// the normalised weights by at most a factor `(1 + η)/(1 − η)`, so the output, an average of
/// values no larger than `V = max |v|`, moves by at most `2η V` plus `1 + η` times the
/// rounding of its own sums: `n` additions and a division on each side, `2 (γ_n + u) V`.
fn tolerance(q: &Tensor, k: &Tensor, v: &Tensor, n: usize) -> f32 {
    let u = f32::EPSILON / 2.0;
    let gamma = |m: usize| m as f32 * u / (1.0 - m as f32 * u);
    let d = k.size(1);
    let (q, k) = (q.to_vec(), k.to_vec());
    let a = q
        .chunks(d)
        .flat_map(|q_h| k.chunks(d).map(move |k_j| abs_dot(q_h, k_j)))
        .fold(0.0f32, f32::max);
    let c = std::f32::consts::LOG2_E / (d as f32).sqrt();
    let (delta, range) = (2.0 * gamma(d + 1) * c * a, 2.0 * c * a);
    let eta = std::f32::consts::LN_2 * (delta + 2.0 * u * range) + 4.0 * u;
    let v_max = v.abs().max().item();
    (2.0 * eta + 2.0 * (gamma(n) + u)) * (1.0 + eta) * v_max
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Scores drawn from a few values, both zeros and infinities among them, so ties are
    /// everywhere: the selection by bits keeps exactly the keys `keep_top_k` keeps.
    #[test]
    fn the_selection_by_bits_is_keep_top_k(
        scores in prop::collection::vec(0usize..7, 0..300), top_k in 0usize..320,
    ) {
        let values = [-1.5, -0.0, 0.0, 0.25, 3.0, f32::INFINITY, f32::NEG_INFINITY];
        let scores: Vec<f32> = scores.iter().map(|&s| values[s]).collect();
        let expected: Vec<u32> = keep_top_k(&scores, top_k).iter().map(|&j| j as u32).collect();
        for isa in isas() {
            let mut radix = RadixTopK::with_isa(isa);
            prop_assert_eq!(radix.select(&scores, top_k), &expected[..], "{:?}", isa);
        }
    }

    /// Scores of any bits (normal, subnormal, signed, infinite; NaN aside): the same keys.
    #[test]
    fn the_selection_by_bits_is_keep_top_k_for_any_floats(
        scores in prop::collection::vec(any::<f32>().prop_filter("not NaN", |x| !x.is_nan()), 1..500),
        top_k in 1usize..520,
    ) {
        let expected: Vec<u32> = keep_top_k(&scores, top_k).iter().map(|&j| j as u32).collect();
        for isa in isas() {
            let mut radix = RadixTopK::with_isa(isa);
            prop_assert_eq!(radix.select(&scores, top_k), &expected[..], "{:?}", isa);
        }
    }

    /// Long rows, as the kernel's, where the threshold is looked for among the keys at or
    /// above a bound from a sample: normal scores, or a few values with ties everywhere, or
    /// a row whose sampled scores (every eighth) are its best, so that the sample's bound
    /// is too high and the search falls back to every key. Always `keep_top_k`'s keys.
    #[test]
    fn the_selection_from_a_sample_is_keep_top_k(
        seed in 0u64..10_000, n in 1000usize..6000, top_k in 1usize..1500, kind in 0usize..3,
    ) {
        manual_seed(seed);
        let normal = randn(&[n]).to_vec();
        let scores: Vec<f32> = match kind {
            0 => normal,
            1 => normal.iter().map(|x| (x * 2.0).round()).collect(),
            _ => normal
                .iter()
                .enumerate()
                .map(|(j, x)| if j % 8 == 0 { 10.0 + x.abs() } else { -x.abs() })
                .collect(),
        };
        let expected: Vec<u32> = keep_top_k(&scores, top_k).iter().map(|&j| j as u32).collect();
        for isa in isas() {
            let mut radix = RadixTopK::with_isa(isa);
            // Twice, so that buffers grown by the first call serve the second.
            for _ in 0..2 {
                prop_assert_eq!(radix.select(&scores, top_k), &expected[..], "{:?}", isa);
            }
        }
    }

    /// The index scores of any tile, through the GEMM into reused buffers, are the
    /// listing's bit for bit (so the same keys are kept), with the future keys 0.
    #[test]
    fn the_index_scores_are_the_listings_bit_for_bit(
        seed in 0u64..10_000, t in 1usize..300, heads in 1usize..5, d in 1usize..40,
        start in 0usize..300, rows in 1usize..70,
    ) {
        manual_seed(seed);
        let (q_index, k_index, w) = (randn(&[t, heads, d]), randn(&[t, d]), randn(&[t, heads]));
        let start = start % t;
        let queries = start..(start + rows).min(t);
        let expected = index_scores_of_tile(&q_index, &k_index, &w, queries.clone()).to_vec();
        let (qf, kf, wf) = (q_index.to_vec(), k_index.to_vec(), w.to_vec());
        let index = IndexInputs { q: &qf, k: &kf, w: &wf, heads, d };
        // Buffers left from a larger tile first, as in the kernel.
        let (mut products, mut scores) = (vec![f32::NAN; 7 * t * heads], vec![f32::NAN; 7 * t]);
        index_scores_into(&index, queries.clone(), &mut products, &mut scores);
        let got = &scores[..queries.len() * queries.end];
        let same = got.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits());
        prop_assert!(same, "the index scores of {:?} differ from the listing's", queries);
    }

    /// For any length, heads, sizes, top k and tile, on every instruction set, the fast
    /// kernel is the listing's within the derived tolerance.
    #[test]
    fn the_fast_kernel_is_the_listing_within_its_tolerance(
        seed in 0u64..10_000, t in 1usize..90, heads in 1usize..5, d in 1usize..40,
        d_v in 1usize..70, top_k in 1usize..40, tile in 1usize..20,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, heads, d]), randn(&[t, d]), randn(&[t, d_v]));
        let (q_index, k_index, w) = (randn(&[t, 2, 4]), randn(&[t, 4]), randn(&[t, 2]));
        let indexer = Indexer { q: &q_index, k: &k_index, w: &w };
        let expected = dsa_kernel(&q, &k, &v, &indexer, top_k, tile).unwrap();
        let bound = tolerance(&q, &k, &v, top_k.min(t));
        for isa in isas() {
            let out = dsa_kernel_fast_with(isa, &q, &k, &v, &indexer, top_k, tile).unwrap();
            let gap = (&out - &expected).abs().max().item();
            prop_assert!(gap <= bound, "{:?}: {} from the listing, more than {}", isa, gap, bound);
        }
    }
}

/// At the benchmark's widths (64 features, 8 heads, an indexer of 4 heads of 32; 1024 kept
/// keys of up to 1100, a smaller `k` so that the test stays quick) the bound holds too, and
/// it is tight enough to mean something: well under the outputs' size.
#[test]
fn the_fast_kernel_agrees_at_the_benchmarks_sizes() {
    manual_seed(3);
    let t = 1100;
    let (q, k, v) = (randn(&[t, 8, 64]), randn(&[t, 64]), randn(&[t, 64]));
    let (q_index, k_index, w) = (randn(&[t, 4, 32]), randn(&[t, 32]), randn(&[t, 4]));
    let indexer = Indexer {
        q: &q_index,
        k: &k_index,
        w: &w,
    };
    let (top_k, tile) = (1024, 64);
    let expected = dsa_kernel(&q, &k, &v, &indexer, top_k, tile).unwrap();
    let out = dsa_kernel_fast(&q, &k, &v, &indexer, top_k, tile).unwrap();
    let gap = (&out - &expected).abs().max().item();
    let bound = tolerance(&q, &k, &v, top_k);
    assert!(gap <= bound, "{gap} from the listing, more than {bound}");
    assert!(bound < 1e-2, "the bound {bound} says little");
}

/// Rows longer than the keys the GEMM takes at a time, so that the scores are put
/// together from several chunks of keys, a query's last visible key falling in the first,
/// a middle or the last chunk: still the listing's bit for bit.
#[test]
fn the_index_scores_of_long_rows_are_the_listings_bit_for_bit() {
    manual_seed(5);
    let (t, heads, d) = (1300, 4, 32);
    let (q_index, k_index, w) =
        (randn(&[t, heads, d]), randn(&[t, d]), randn(&[t, heads]));
    let (qf, kf, wf) = (q_index.to_vec(), k_index.to_vec(), w.to_vec());
    let index = IndexInputs {
        q: &qf,
        k: &kf,
        w: &wf,
        heads,
        d,
    };
    let (mut products, mut scores) = (Vec::new(), Vec::new());
    for queries in [0..64, 480..560, 1000..1064, 1236..1300, 1299..1300] {
        let expected =
            index_scores_of_tile(&q_index, &k_index, &w, queries.clone()).to_vec();
        index_scores_into(&index, queries.clone(), &mut products, &mut scores);
        let got = &scores[..queries.len() * queries.end];
        let same = got
            .iter()
            .zip(&expected)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(
            same,
            "the index scores of {queries:?} differ from the listing's"
        );
    }
}

#[test]
fn bad_shapes_are_errors_that_name_the_fast_kernel() {
    let (q, k, v) = (randn(&[5, 2, 8]), randn(&[5, 8]), randn(&[4, 8]));
    let (q_index, k_index, w) = (randn(&[5, 2, 4]), randn(&[5, 4]), randn(&[5, 2]));
    let indexer = Indexer {
        q: &q_index,
        k: &k_index,
        w: &w,
    };
    let message = dsa_kernel_fast(&q, &k, &v, &indexer, 3, 2)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("dsa_kernel_fast") && message.contains("[4, 8]"),
        "{message}"
    );
    let zero = dsa_kernel_fast(&q, &k, &randn(&[5, 8]), &indexer, 0, 2).unwrap_err();
    assert!(zero.to_string().contains("top_k"), "{zero}");
}
