//! One test per exercise, named after it, so `cargo test -p ch04-trainable --features
//! exercise NAME` checks just that exercise. Each compares with the text PyTorch printed
//! (`reference/expected/ch04-trainable.txt`) and checks properties on random inputs that a
//! hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::your_journey;
use ch04_trainable::answers::Trend;
use ch04_trainable::scaled::scaled_attention_weights;
use ch04_trainable::unscaled::{
    predict_entropy_trend, row_entropy, unscaled_attention_weights,
};
use ch04_trainable::{SelfAttentionV1, SelfAttentionV2};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::assert_close;
use shared::{Tensor, manual_seed, randn, stack};

const PYTORCH: &str = include_str!("../../../reference/expected/ch04-trainable.txt");

/// The text PyTorch printed under `## title` in this chapter's reference output.
fn pytorch_step(title: &str) -> &'static str {
    course::narrative::step_text(PYTORCH, title)
        .expect("the step is in the reference")
}

/// The blog post's three `randn(3, 2)` matrices after `manual_seed(123)`: query, key, value.
fn seed_000_weights() -> [Tensor; 3] {
    manual_seed(123);
    [randn(&[3, 2]), randn(&[3, 2]), randn(&[3, 2])]
}

#[test]
fn exercise_scaled_attention_weights() {
    let inputs = your_journey();
    let [w_query, w_key, _] = seed_000_weights();
    let query_2 = inputs.get(1).matmul(&w_query);
    let keys = inputs.matmul(&w_key);
    let weights = scaled_attention_weights(&query_2.matmul(&keys.t()), 2);
    assert_eq!(weights.to_string(), pytorch_step("Scaled softmax"));
    // All queries at once: one row of weights per query, and row 1 is the one above.
    let all = scaled_attention_weights(&inputs.matmul(&w_query).matmul(&keys.t()), 2);
    assert_eq!(all.shape(), [6, 6]);
    assert_close(&all.get(1), &weights, 0.0, 1e-6);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random scores: every row is positive and sums to 1, and the ratio of two weights
    /// in a row is `exp((ω_a - ω_b) / √d_k)`, the definition of the scaled softmax.
    #[test]
    fn exercise_scaled_attention_weights_is_a_scaled_softmax(
        seed in 0u64..10_000, queries in 1usize..6, keys in 1usize..8, d_k in 1usize..64,
    ) {
        manual_seed(seed);
        let scores = &randn(&[queries, keys]) * 3.0;
        let weights = scaled_attention_weights(&scores, d_k);
        prop_assert_eq!(weights.shape(), [queries, keys]);
        let scale = (d_k as f32).sqrt();
        for (s_row, w_row) in scores.iter().zip(weights.iter()) {
            let (s, w) = (s_row.to_vec(), w_row.to_vec());
            prop_assert!(w.iter().all(|&x| x > 0.0));
            prop_assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            for b in 0..keys {
                let want = ((s[0] - s[b]) / scale).exp();
                prop_assert!((w[0] / w[b] - want).abs() <= 1e-4 * want.max(1.0));
            }
        }
    }
}

#[test]
fn exercise_self_attention_v1() {
    let inputs = your_journey();
    let _ = seed_000_weights(); // as in the article: V1 continues the generator
    let sa_v1 = SelfAttentionV1::new(3, 2);
    assert_eq!(
        sa_v1.forward(&inputs).to_string(),
        pytorch_step("SelfAttentionv1 (the generator continues, no re-seed)")
    );
    // The step-by-step context vector of x(2) is row 1 when the module gets those weights.
    let [w_query, w_key, w_value] = seed_000_weights();
    let sa = SelfAttentionV1 {
        w_query,
        w_key,
        w_value,
    };
    assert_eq!(
        sa.forward(&inputs).get(1).to_string(),
        pytorch_step("Context vector z(2)")
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Self-attention has no notion of order: shuffling the tokens shuffles the outputs the
    /// same way (here: reversing them).
    #[test]
    fn exercise_self_attention_v1_follows_the_token_order(
        seed in 0u64..10_000, n in 1usize..8, d_in in 1usize..6, d_out in 1usize..6,
    ) {
        manual_seed(seed);
        let x = randn(&[n, d_in]);
        let sa = SelfAttentionV1::new(d_in, d_out);
        let out = sa.forward(&x);
        prop_assert_eq!(out.shape(), [n, d_out]);
        let reversed: Vec<Tensor> = x.iter().collect::<Vec<_>>().into_iter().rev().collect();
        let out_reversed = sa.forward(&stack(&reversed, 0));
        for i in 0..n {
            let (a, b) = (out.get(i), out_reversed.get(n - 1 - i));
            for (p, q) in a.to_vec().into_iter().zip(b.to_vec()) {
                prop_assert!((p - q).abs() <= 1e-4 * p.abs().max(1.0), "{} vs {}", a, b);
            }
        }
    }
}

#[test]
fn exercise_self_attention_v2() {
    let inputs = your_journey();
    manual_seed(789);
    let sa_v2 = SelfAttentionV2::new(3, 2, false);
    assert_eq!(
        sa_v2.forward(&inputs).to_string(),
        pytorch_step("SelfAttention_v2 with nn.Linear (manual_seed(789))")
    );
    // With biases the layers add them: another result, the same shape.
    manual_seed(789);
    let with_bias = SelfAttentionV2::new(3, 2, true).forward(&inputs);
    assert_eq!(with_bias.shape(), [6, 2]);
    assert_ne!(with_bias, sa_v2.forward(&inputs));
}

proptest! {
    #![proptest_config(quiet(32))]

    /// `Linear` computes `x · Wᵀ`, so V1 holding the transposed weights `Wᵀ` is the same
    /// function as V2 holding `W`.
    #[test]
    fn exercise_self_attention_v2_equals_v1_with_transposed_weights(
        seed in 0u64..10_000, n in 1usize..8, d_in in 1usize..6, d_out in 1usize..6,
    ) {
        manual_seed(seed);
        let x = randn(&[n, d_in]);
        let sa_v2 = SelfAttentionV2::new(d_in, d_out, false);
        let sa_v1 = SelfAttentionV1 {
            w_query: sa_v2.w_query.weight.t().contiguous(),
            w_key: sa_v2.w_key.weight.t().contiguous(),
            w_value: sa_v2.w_value.weight.t().contiguous(),
        };
        let (v1, v2) = (sa_v1.forward(&x), sa_v2.forward(&x));
        prop_assert_eq!(v2.shape(), [n, d_out]);
        for (p, q) in v1.to_vec().into_iter().zip(v2.to_vec()) {
            prop_assert!((p - q).abs() <= 1e-5, "{} vs {}", v1, v2);
        }
    }
}

/// `-Σ w·ln w` of every row, in `f64`, skipping zeros.
fn entropy_by_hand(weights: &Tensor) -> Vec<f64> {
    let n = weights.size(-1);
    weights
        .to_vec()
        .chunks(n)
        .map(|row| {
            row.iter()
                .filter(|&&w| w > 0.0)
                .map(|&w| -f64::from(w) * f64::from(w).ln())
                .sum()
        })
        .collect()
}

/// The average entropy of the weights of 16 random queries over 16 random keys, entries of
/// variance 1, with or without the `1/√d_k`.
fn mean_entropy(d_k: usize, scaled: bool) -> f64 {
    let (q, k) = (randn(&[16, d_k]), randn(&[16, d_k]));
    let scores = q.matmul(&k.t());
    let weights = if scaled {
        (&scores / (d_k as f32).sqrt()).softmax(-1)
    } else {
        unscaled_attention_weights(&scores)
    };
    let entropies = row_entropy(&weights).to_vec();
    entropies.iter().map(|&e| f64::from(e)).sum::<f64>() / entropies.len() as f64
}

/// What the average entropy did between a small and a 64 times larger key size.
fn trend(small: f64, large: f64) -> Trend {
    if large < 0.6 * small {
        Trend::Falls
    } else if large > small / 0.6 {
        Trend::Grows
    } else {
        Trend::StaysAbout
    }
}

#[test]
fn exercise_unscaled_weights() {
    // The blog post's scores with and without the scaling: the same order, sharper rows.
    let inputs = your_journey();
    let [w_query, w_key, _] = seed_000_weights();
    let scores = inputs.matmul(&w_query).matmul(&inputs.matmul(&w_key).t());
    let unscaled = unscaled_attention_weights(&scores);
    assert_close(&unscaled, &scores.softmax(-1), 0.0, 0.0);
    let (plain, scaled) = (
        row_entropy(&unscaled),
        row_entropy(&scaled_attention_weights_of(&scores, 2)),
    );
    for (e, by_hand) in plain.to_vec().iter().zip(entropy_by_hand(&unscaled)) {
        assert!(
            (f64::from(*e) - by_hand).abs() < 1e-5,
            "entropy {e}, by hand {by_hand}"
        );
    }
    for (p, s) in plain.to_vec().iter().zip(scaled.to_vec()) {
        assert!(*p <= s + 1e-6, "without scaling {p}, with {s}");
    }
    // A one-hot row has entropy 0 (no NaN from 0·ln 0) and a uniform row ln n.
    let rows =
        Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.25, 0.25], &[2, 4]);
    let e = row_entropy(&rows).to_vec();
    assert_eq!(e[0], 0.0);
    assert!((e[1] - 4f32.ln()).abs() < 1e-6);
    manual_seed(0);
    for scaled in [true, false] {
        let (small, large) = (mean_entropy(4, scaled), mean_entropy(256, scaled));
        assert_eq!(
            predict_entropy_trend(scaled),
            trend(small, large),
            "scaled: {scaled}; mean entropy {small:.3} at d_k = 4, {large:.3} at d_k = 256"
        );
    }
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For random queries and keys of a random small key size: entropies match a direct
    /// computation, every row is at least as sharp without the scaling as with it, and the
    /// average entropy goes from `d_k` to `64·d_k` as predicted.
    #[test]
    fn exercise_unscaled_weights_as_d_k_grows(seed in 0u64..10_000, d_k in 2usize..8) {
        manual_seed(seed);
        let (q, k) = (randn(&[8, d_k]), randn(&[8, d_k]));
        let scores = q.matmul(&k.t());
        let plain = unscaled_attention_weights(&scores);
        prop_assert!(shared::testing::close(&plain, &scores.softmax(-1), 0.0, 0.0));
        let entropy = row_entropy(&plain).to_vec();
        prop_assert_eq!(entropy.len(), 8);
        for (e, by_hand) in entropy.iter().zip(entropy_by_hand(&plain)) {
            prop_assert!((f64::from(*e) - by_hand).abs() < 1e-5, "{} vs {}", e, by_hand);
        }
        let scaled = row_entropy(&scaled_attention_weights_of(&scores, d_k)).to_vec();
        for (p, s) in entropy.iter().zip(&scaled) {
            prop_assert!(*p <= s + 1e-5, "without scaling {}, with {}", p, s);
        }
        for scaled in [true, false] {
            let (small, large) = (mean_entropy(d_k, scaled), mean_entropy(64 * d_k, scaled));
            prop_assert_eq!(predict_entropy_trend(scaled), trend(small, large),
                "scaled: {}; {} at d_k = {}, {} at {}", scaled, small, d_k, large, 64 * d_k);
        }
    }
}

/// The chapter's scaled weights, written out (so that this test does not need the
/// `scaled_attention_weights` exercise).
fn scaled_attention_weights_of(scores: &Tensor, d_k: usize) -> Tensor {
    (scores / (d_k as f32).sqrt()).softmax(-1)
}
