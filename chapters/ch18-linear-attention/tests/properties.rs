//! Properties of the chapter's forms beyond its printed output: the three forms of linear
//! attention and the two of Gated DeltaNet agree within stated bounds and are not equal
//! bit for bit; one chunk is the parallel form exactly; the delta form of the update is the
//! textbook formula. Tests that run the learner's
//! exercises (the recurrent form, the delta rule's write, the UT transform) are left out with
//! `--features exercise`.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, bits_difference, max_abs_diff};
use shared::{Tensor, manual_seed, randn};

use ch18_linear_attention::chunked::linear_chunked;
use ch18_linear_attention::feature_map::elu_plus_one;
use ch18_linear_attention::gates::{cumsum, exp, l2_normalize, log_sigmoid};
use ch18_linear_attention::parallel::{linear_parallel, softmax_attention};
use ch18_linear_attention::setup::{D, T};
use ch18_linear_attention::sparse::{index_scores, sparse_attention, top_k_kept};

#[test]
fn one_chunk_is_the_parallel_form_bit_for_bit() {
    manual_seed(18);
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    assert_same_bits(
        &linear_chunked(&q, &k, &v, T),
        &linear_parallel(&q, &k, &v),
        "",
    );
}

#[test]
fn the_feature_map_is_positive_and_elu_plus_one() {
    let x = Tensor::from_vec(vec![-30.0, -1.0, 0.0, 0.5, 2.0], &[5]);
    let phi = elu_plus_one(&x).to_vec();
    assert!(phi.iter().all(|&f| f > 0.0), "{phi:?}");
    assert_eq!(phi[2..], [1.0, 1.5, 3.0]);
    assert_eq!(phi[1], (-1.0f64).exp() as f32);
}

#[test]
fn the_gates_are_what_they_say() {
    let x = Tensor::from_vec(vec![-3.0, 0.0, 2.5], &[3]);
    // e^(log sigmoid(x)) = sigmoid(x), to float32 rounding.
    let back = exp(&log_sigmoid(&x)).to_vec();
    for (got, x) in back.iter().zip([-3.0f64, 0.0, 2.5]) {
        let want = 1.0 / (1.0 + (-x).exp());
        assert!((*got as f64 - want).abs() < 1e-7, "{got} vs {want}");
    }
    let g = Tensor::from_vec(vec![0.5, -0.25, 1.0], &[3]);
    assert_eq!(cumsum(&g).to_vec(), vec![0.5, 0.25, 1.25]);
    let rows = l2_normalize(&Tensor::from_vec(vec![3.0, 4.0, 0.0, 2.0], &[2, 2]));
    assert_eq!(rows.to_vec(), vec![0.6, 0.8, 0.0, 1.0]);
}

/// Ties: when every score is equal (the indexer's ReLU makes zeros common), each query
/// still keeps `min(k, t + 1)` keys, all of them visible.
#[test]
fn the_indexer_keeps_k_visible_keys_even_when_scores_tie() {
    let kept = top_k_kept(&shared::zeros(&[9, 9]), 4);
    for t in 0..9 {
        let row = kept.get(t as i64).to_vec();
        assert_eq!(
            row.iter().filter(|&&x| x).count(),
            4.min(t + 1),
            "query {t}"
        );
        assert!(
            row[t + 1..].iter().all(|&x| !x),
            "query {t} keeps a future key"
        );
    }
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Each query keeps `min(k, t + 1)` keys it can see, the best by index score; keeping
    /// every key is dense causal attention, bit for bit.
    #[test]
    fn sparse_attention_keeps_the_best_visible_keys(
        seed in 0u64..1000,
        t in 1usize..20,
        top_k in 1usize..8,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, 8]), randn(&[t, 8]), randn(&[t, 8]));
        let scores = index_scores(&randn(&[t, 3, 4]), &randn(&[t, 4]), &randn(&[t, 3]));
        let kept = top_k_kept(&scores, top_k);
        for row in 0..t {
            let keys = kept.get(row as i64).to_vec();
            let values = scores.get(row as i64).to_vec();
            prop_assert_eq!(keys.iter().filter(|&&x| x).count(), top_k.min(row + 1), "query {} keeps the wrong number of keys", row);
            prop_assert!(keys[row + 1..].iter().all(|&x| !x), "query {} keeps a key after it", row);
            let worst_kept = (0..=row).filter(|&s| keys[s]).map(|s| values[s]).fold(f32::INFINITY, f32::min);
            let best_dropped = (0..=row).filter(|&s| !keys[s]).map(|s| values[s]).fold(f32::NEG_INFINITY, f32::max);
            prop_assert!(worst_kept >= best_dropped, "query {row} keeps a key scored {worst_kept} and drops one scored {best_dropped}");
        }
        let all = top_k_kept(&scores, t);
        prop_assert_eq!(bits_difference(&sparse_attention(&q, &k, &v, &all), &softmax_attention(&q, &k, &v)), None, "keeping every key is not dense attention bit for bit");
    }

    /// The chunked form agrees with the parallel one within float32 rounding, for any
    /// chunk size, the last chunk shorter included.
    #[test]
    fn chunked_agrees_with_parallel(seed in 0u64..1000, t in 1usize..48, chunk in 1usize..20) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, 8]), randn(&[t, 8]), randn(&[t, 4]));
        let parallel = linear_parallel(&q, &k, &v);
        let chunked = linear_chunked(&q, &k, &v, chunk);
        let scale = parallel.abs().max().item().max(1.0);
        prop_assert!(max_abs_diff(&chunked, &parallel) <= 1e-5 * scale, "the chunked form is {} from the parallel form, more than 1e-5 of {}", max_abs_diff(&chunked, &parallel), scale);
    }
}

#[cfg(not(feature = "exercise"))]
mod with_the_solved_exercises {
    use super::*;
    use ch15_modern_layer::gate::sigmoid;
    use ch18_linear_attention::chunked_delta::gated_delta_chunked;
    use ch18_linear_attention::delta::delta_write;
    use ch18_linear_attention::gated_delta::gated_delta_recurrent;
    use ch18_linear_attention::recall::{pairs_recalled, recall};
    use ch18_linear_attention::recurrent::linear_recurrent;
    use ch18_linear_attention::setup::CHUNK;
    use shared::eye;
    use shared::zeros;

    /// Gated DeltaNet's inputs as the chapter draws them.
    fn gated_inputs(t: usize, d: usize) -> [Tensor; 5] {
        let (q, k, v) = (randn(&[t, d]), randn(&[t, d]), randn(&[t, d]));
        let beta = sigmoid(&randn(&[t]));
        let log_alpha = log_sigmoid(&(randn(&[t]) + 3.0));
        [l2_normalize(&q), l2_normalize(&k), v, log_alpha, beta]
    }

    /// The chapter's inputs: the three forms of linear attention differ (not one is equal
    /// to another bit for bit), by less than 1e-6 on outputs below 2 in size.
    #[test]
    fn the_linear_forms_differ_in_the_last_bits_only() {
        manual_seed(18);
        let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
        let forms = [
            linear_parallel(&q, &k, &v),
            linear_recurrent(&q, &k, &v),
            linear_chunked(&q, &k, &v, CHUNK),
        ];
        for (i, j) in [(0, 1), (1, 2), (0, 2)] {
            let gap = max_abs_diff(&forms[i], &forms[j]);
            assert!(gap > 0.0 && gap < 1e-6, "forms {i} and {j}: {gap}");
        }
    }

    /// The chapter's inputs: Gated DeltaNet in chunks differs from the token loop, by less
    /// than 1e-6.
    #[test]
    fn gated_deltanet_chunked_differs_in_the_last_bits_only() {
        manual_seed(18);
        for _ in 0..3 {
            randn(&[T, D]);
        }
        let [q, k, v, log_alpha, beta] = gated_inputs(T, D);
        let recurrent = gated_delta_recurrent(&q, &k, &v, &exp(&log_alpha), &beta);
        let chunked = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, CHUNK);
        let gap = max_abs_diff(&recurrent, &chunked);
        assert!(gap > 0.0 && gap < 1e-6, "{gap}");
    }

    /// The delta form `S + β (v − S k) kᵀ` after the decay is the textbook update
    /// `α S (I − β k kᵀ) + β v kᵀ`, to float32 rounding.
    #[test]
    fn the_delta_form_is_the_textbook_update() {
        manual_seed(5);
        let [q, k, v, log_alpha, beta] = gated_inputs(24, 6);
        let alpha = exp(&log_alpha);
        let mut s = zeros(&[6, 6]);
        let mut out = Vec::new();
        for t in 0..24 {
            let (kt, a, b) = (k.get(t), alpha.get(t).item(), beta.get(t).item());
            let projection = eye(6) - b * kt.outer(&kt);
            s = (a * &s).matmul(&projection) + b * v.get(t).outer(&kt);
            out.push(s.matmul(&q.get(t)));
        }
        let textbook = shared::stack(&out, 0);
        let ours = gated_delta_recurrent(&q, &k, &v, &alpha, &beta);
        assert!(
            max_abs_diff(&textbook, &ours) < 1e-5,
            "{}",
            max_abs_diff(&textbook, &ours)
        );
    }

    proptest! {
        #![proptest_config(quiet(16))]

        /// Keys at right angles to each other do not interfere: up to `d` pairs, both
        /// states read every value back (to rounding); and the delta rule always reads the
        /// newest pair back, however many came before it.
        #[test]
        fn recall_is_exact_for_orthogonal_keys_and_the_newest_pair(
            seed in 0u64..1000,
            n in 1usize..9,
            many in 9usize..40,
        ) {
            manual_seed(seed);
            let keys = eye(8).slice(0, ..n);
            let values = randn(&[n, 8]);
            let [summed, replaced, _] = recall(&keys, &values);
            prop_assert!(max_abs_diff(&summed, &values) <= 1e-6, "linear attention's state reads {} orthogonal keys back {} from their values", n, max_abs_diff(&summed, &values));
            prop_assert!(max_abs_diff(&replaced, &values) <= 1e-6, "the delta rule's state reads {} orthogonal keys back {} from their values", n, max_abs_diff(&replaced, &values));
            prop_assert_eq!(pairs_recalled(&summed, &values, 0..n), n, "not every one of {} orthogonal pairs is recalled", n);
            let (keys, values) = (l2_normalize(&randn(&[many, 8])), randn(&[many, 8]));
            let [_, replaced, _] = recall(&keys, &values);
            let newest = replaced.get(-1);
            prop_assert!(max_abs_diff(&newest, &values.get(-1)) <= 1e-5, "after {} pairs the delta rule reads the newest key back {} from its value", many, max_abs_diff(&newest, &values.get(-1)));
        }

        /// Gated DeltaNet in chunks agrees with the token loop for any chunk size.
        #[test]
        fn gated_deltanet_chunked_agrees_with_the_loop(
            seed in 0u64..1000,
            t in 1usize..48,
            chunk in 1usize..20,
        ) {
            manual_seed(seed);
            let [q, k, v, log_alpha, beta] = gated_inputs(t, 8);
            let recurrent = gated_delta_recurrent(&q, &k, &v, &exp(&log_alpha), &beta);
            let chunked = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, chunk);
            prop_assert!(max_abs_diff(&recurrent, &chunked) <= 1e-5, "Gated DeltaNet in chunks of {} is {} from the token loop, more than 1e-5", chunk, max_abs_diff(&recurrent, &chunked));
        }

        /// Linear attention's recurrent form agrees with its parallel form.
        #[test]
        fn recurrent_agrees_with_parallel(seed in 0u64..1000, t in 1usize..48) {
            manual_seed(seed);
            let (q, k, v) = (randn(&[t, 8]), randn(&[t, 8]), randn(&[t, 4]));
            let scale = linear_parallel(&q, &k, &v).abs().max().item().max(1.0);
            let gap = max_abs_diff(&linear_recurrent(&q, &k, &v), &linear_parallel(&q, &k, &v));
            prop_assert!(gap <= 1e-5 * scale, "the recurrent form is {} from the parallel form, more than 1e-5 of {}", gap, scale);
        }

        /// With β = 1 and no decay, Gated DeltaNet is the delta rule: a key written twice
        /// in a row reads only the second value.
        #[test]
        fn a_key_written_twice_reads_the_second_value(seed in 0u64..1000) {
            manual_seed(seed);
            let key = l2_normalize(&randn(&[6]));
            let (first, second) = (randn(&[6]), randn(&[6]));
            let s = delta_write(&delta_write(&zeros(&[6, 6]), &key, &first, 1.0), &key, &second, 1.0);
            prop_assert!(max_abs_diff(&s.matmul(&key), &second) <= 1e-5, "a key written twice reads back {} from the second value", max_abs_diff(&s.matmul(&key), &second));
        }
    }
}
