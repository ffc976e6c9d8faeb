//! `multinomial`'s rules beyond its ids (which `tests/fixtures/sampling_fixtures.json`, made
//! by real PyTorch, checks): PyTorch's errors, which path draws what, and no panic whatever
//! the weights.

use proptest::prelude::*;

use super::super::Generator;
use crate::tensor::Tensor;

fn probs(values: &[f32]) -> Tensor {
    Tensor::from_vec(values.to_vec(), &[values.len()])
}

/// The message of `probs.multinomial(n, replacement)`'s error, from a fresh generator.
fn error_of(probs: &Tensor, n: usize, replacement: bool) -> String {
    probs
        .f_multinomial_with(n, replacement, &mut Generator::new(0))
        .expect_err("an invalid call")
        .to_string()
}

#[test]
fn bad_shapes_and_counts_fail_with_pytorchs_messages() {
    let cases = [
        (
            Tensor::scalar(1.0),
            1,
            false,
            "prob_dist must be 1 or 2 dim",
        ),
        (
            Tensor::from_vec(vec![1.0; 8], &[2, 2, 2]),
            1,
            false,
            "prob_dist must be 1 or 2 dim",
        ),
        (
            probs(&[1.0, 2.0]),
            0,
            true,
            "cannot sample n_sample <= 0 samples",
        ),
        (
            probs(&[1.0, 2.0, 3.0]),
            4,
            false,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ),
        (
            probs(&[]),
            1,
            true,
            "aminmax(): cannot compute aminmax over an empty dimension",
        ),
        (
            Tensor::from_vec(vec![], &[3, 0]),
            2,
            true,
            "invalid multinomial distribution (sum of probabilities <= 0)",
        ),
    ];
    for (probs, n, replacement, message) in cases {
        let error = error_of(&probs, n, replacement);
        assert!(error.starts_with("multinomial: "), "{error}");
        assert!(error.contains(message), "{error} should contain {message}");
    }
}

#[test]
fn bad_weights_fail_with_each_paths_message() {
    let fast = "probability tensor contains either `inf`, `nan` or element < 0";
    let zero = "invalid multinomial distribution (sum of probabilities <= 0)";
    let negative =
        "invalid multinomial distribution (encountering probability entry < 0)";
    let infinite = "invalid multinomial distribution (encountering probability entry = infinity or NaN)";
    let cases = [
        // (weights, with replacement and 2 samples?, message): one sample or no replacement
        // takes the exponential race, which checks the whole tensor first; several samples
        // with replacement check entry by entry, and NaN fails the `>= 0` test first.
        (vec![1.0, -1.0], false, fast),
        (vec![1.0, f32::INFINITY], false, fast),
        (vec![1.0, f32::NAN], false, fast),
        (vec![0.0, 0.0], false, zero),
        (vec![1.0, -1.0], true, negative),
        (vec![1.0, f32::INFINITY], true, infinite),
        (vec![1.0, f32::NAN], true, negative),
        (vec![0.0, -0.0], true, zero),
    ];
    for (weights, replacement, message) in cases {
        let error = error_of(&probs(&weights), 2, replacement);
        assert!(error.contains(message), "{weights:?}: {error}");
    }
    // A row of zeros anywhere fails, as does any bad entry in any row.
    let rows = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0], &[2, 2]);
    assert!(error_of(&rows, 1, false).contains(zero));
}

#[test]
fn the_exponential_race_checks_before_it_draws() {
    let mut generator = Generator::new(5);
    assert!(
        probs(&[1.0, f32::NAN])
            .f_multinomial_with(1, false, &mut generator)
            .is_err()
    );
    assert_eq!(generator.random(), Generator::new(5).random());
}

#[test]
fn with_replacement_rows_draw_before_a_later_row_fails() {
    // PyTorch checks and samples one row after the other: the good first row has drawn its
    // two samples when the second row's negative weight stops the call.
    let mut failed = Generator::new(0);
    let bad = Tensor::from_vec(vec![1.0, 1.0, 1.0, -1.0], &[2, 2]);
    assert!(bad.f_multinomial_with(2, true, &mut failed).is_err());
    let mut first_row_only = Generator::new(0);
    probs(&[1.0, 1.0]).multinomial_with(2, true, &mut first_row_only);
    assert_eq!(failed.random(), first_row_only.random());
}

#[test]
fn one_sample_is_the_argmax_of_probs_over_exponential_noise() {
    // The formula behind the fast path, written out: q ~ Exp(1), then argmax(p / q).
    let weights = [0.05, 0.3, 0.1, 0.25, 0.2, 0.1];
    for seed in 0..50 {
        let mut noise = Generator::new(seed);
        let mut q = vec![0.0; weights.len()];
        noise.fill_exponential(&mut q, 1.0);
        let ratio = &probs(&weights) / &probs(&q);
        let sampled =
            probs(&weights).multinomial_with(1, false, &mut Generator::new(seed));
        assert_eq!(sampled.to_vec(), ratio.argmax_dim(-1, true).to_vec());
    }
}

#[test]
fn a_transposed_probs_gets_its_noise_in_memory_order() {
    // From PyTorch 2.13.0: `p = ((torch.arange(35.) % 7) + 1).reshape(5, 7).t()` after
    // `torch.manual_seed(3)`. The exponential race fills its noise in the order of memory,
    // so the transposed view samples other ids than its contiguous copy; the cumulative
    // distribution reads rows in order and does not care.
    let stored: Vec<f32> = (0..35).map(|i| (i % 7 + 1) as f32).collect();
    let p = Tensor::from_vec(stored, &[5, 7]).t();
    let contiguous = Tensor::from_vec(p.to_vec(), &[7, 5]);
    let ids = |probs: &Tensor, n, replacement| {
        probs
            .multinomial_with(n, replacement, &mut Generator::new(3))
            .to_vec()
    };
    assert_eq!(ids(&p, 1, false), [0, 3, 2, 4, 4, 4, 4]);
    assert_eq!(ids(&contiguous, 1, false), [0, 1, 0, 0, 2, 0, 2]);
    assert_eq!(
        ids(&p, 3, false),
        [
            0, 1, 3, 3, 2, 0, 2, 3, 0, 4, 0, 1, 4, 3, 1, 4, 2, 3, 4, 0, 1
        ]
    );
    let with_replacement = [
        0, 1, 3, 0, 3, 3, 0, 2, 2, 3, 0, 2, 2, 1, 4, 0, 0, 2, 4, 0, 3, 2, 0, 1, 2, 0,
        2, 2,
    ];
    assert_eq!(ids(&p, 4, true), with_replacement);
    assert_eq!(ids(&contiguous, 4, true), with_replacement);
}

#[test]
fn topk_orders_ties_as_pytorch() {
    // From `torch.topk` in PyTorch 2.13.0: equal values do not come back by index.
    let ties = probs(&[0.0, 1.0, 0.0, 0.0, 2.0].repeat(4));
    assert_eq!(
        ties.topk(20, -1, true, true).1.to_vec(),
        [
            19, 14, 4, 9, 6, 1, 11, 16, 13, 0, 18, 17, 2, 15, 5, 8, 10, 3, 12, 7
        ]
    );
    let sparse: Vec<f32> = (0..1000)
        .map(|i| if i % 50 == 0 { 1.0 } else { 0.0 })
        .collect();
    // 15 * 64 <= 1000: the partial sort path.
    assert_eq!(
        probs(&sparse).topk(15, -1, true, true).1.to_vec(),
        [
            500, 350, 450, 550, 150, 600, 400, 650, 200, 250, 700, 50, 300, 100, 0
        ]
    );
    assert_eq!(
        probs(&sparse).topk(3, -1, false, true).1.to_vec(),
        [3, 1, 2]
    );
}

proptest! {
    #[test]
    fn any_weights_give_ids_or_an_error_never_a_panic(
        weights in prop::collection::vec(
            prop_oneof![
                4 => 0.0f32..10.0,
                1 => Just(0.0f32),
                1 => any::<f32>(),
            ],
            0..40,
        ),
        rows in 1usize..3,
        num_samples in 0usize..50,
        replacement in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let n = weights.len();
        let tensor = if rows == 1 {
            probs(&weights)
        } else {
            Tensor::from_vec(weights.repeat(rows), &[rows, n])
        };
        let valid = weights.iter().all(|&p| p.is_finite() && p >= 0.0)
            && weights.iter().any(|&p| p > 0.0)
            && num_samples >= 1
            && (replacement || num_samples <= n);
        match tensor.f_multinomial_with(num_samples, replacement, &mut Generator::new(seed)) {
            Ok(ids) => {
                prop_assert!(valid, "{weights:?} {num_samples} {replacement} gave {ids:?}");
                let mut shape = tensor.sizes().to_vec();
                *shape.last_mut().unwrap() = num_samples;
                prop_assert_eq!(ids.sizes(), &shape[..]);
                for row in ids.to_vec().chunks(num_samples) {
                    prop_assert!(row.iter().all(|&i| (0..n as i64).contains(&i)));
                    if !replacement {
                        let mut distinct = row.to_vec();
                        distinct.sort_unstable();
                        distinct.dedup();
                        prop_assert_eq!(distinct.len(), row.len());
                    }
                }
            }
            Err(error) => {
                prop_assert!(!valid, "{weights:?} {num_samples} {replacement}: {error}");
                prop_assert!(error.to_string().starts_with("multinomial: "));
            }
        }
    }
}
