//! The exercises' tests: each `exercise_NAME*` test checks exercise `NAME` alone, on
//! small inputs (none needs the text).

use ch11_training::embedding_backward::embedding_backward;
use ch19_induction_heads::arithmetic::Formulas;
use ch22_pretraining::backward::rms_norm::rms_norm_backward;
use ch22_pretraining::backward::tied_embedding::tied_embedding_backward;
use ch22_pretraining::baselines::smoothed;
use ch22_pretraining::batches::draw_batch;
use ch22_pretraining::bpe::{merge, most_frequent_pair};
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::first_loss::first_loss;
use ch22_pretraining::model::Model;
use ch22_pretraining::pytorch_order::rms_norm_backward_in_pytorch_order;
use ch22_pretraining::train::loss;
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use shared::nn::RMSNorm;
use shared::rng::Generator;
use shared::{Tensor, manual_seed, randint, randn};

/// Ids below 26 as the letters `a`..`z`, so that a merge can be checked with
/// `str::replace`, which also replaces left to right without overlaps.
fn letters(ids: &[u32]) -> String {
    ids.iter().map(|&id| char::from(b'a' + id as u8)).collect()
}

/// What is wrong with `merge(ids, pair, new_id)`, or `None`.
fn check_merge(ids: &[u32], pair: (u32, u32), new_id: u32) -> Option<String> {
    let merged = merge(ids, pair, new_id);
    let expected =
        letters(ids).replace(&letters(&[pair.0, pair.1]), &letters(&[new_id]));
    (letters(&merged) != expected).then(|| {
        format!(
            "merge({ids:?}, {pair:?}, {new_id}) returned {merged:?}, expected {:?}",
            expected
                .bytes()
                .map(|b| u32::from(b - b'a'))
                .collect::<Vec<_>>()
        )
    })
}

#[test]
fn exercise_merge_replaces_every_occurrence_left_to_right() {
    for (ids, pair, new_id, expected) in [
        (vec![0, 1, 2, 0, 1], (0, 1), 3, vec![3, 2, 3]),
        (vec![0, 0, 0], (0, 0), 1, vec![1, 0]),
        (vec![0, 0, 0, 0], (0, 0), 1, vec![1, 1]),
        (vec![2, 0, 1], (0, 1), 5, vec![2, 5]),
        (vec![1, 0], (0, 1), 5, vec![1, 0]),
        (vec![0], (0, 1), 5, vec![0]),
        (vec![], (0, 1), 5, vec![]),
    ] {
        assert_eq!(
            merge(&ids, pair, new_id),
            expected,
            "merge({ids:?}, {pair:?}, {new_id})"
        );
    }
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_merge_on_random_words(
        ids in prop::collection::vec(0u32..4, 0..24),
        a in 0u32..4,
        b in 0u32..4,
    ) {
        holds(check_merge(&ids, (a, b), 25))?;
    }
}

#[test]
fn exercise_most_frequent_pair_breaks_ties_towards_the_smaller_pair() {
    let counts = vec![vec![0, 3, 1], vec![5, 0, 0], vec![0, 5, 2]];
    assert_eq!(
        most_frequent_pair(&counts),
        Some((1, 0)),
        "counts {counts:?}"
    );
    let counts = vec![vec![0, 4], vec![4, 4]];
    assert_eq!(
        most_frequent_pair(&counts),
        Some((0, 1)),
        "counts {counts:?}"
    );
    let counts = vec![vec![0, 0], vec![0, 0]];
    assert_eq!(
        most_frequent_pair(&counts),
        None,
        "no pair occurs: {counts:?}"
    );
    assert_eq!(most_frequent_pair(&[]), None, "an empty table");
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_most_frequent_pair_on_random_counts(
        counts in (1usize..6).prop_flat_map(|n| {
            prop::collection::vec(prop::collection::vec(0u64..4, n), n)
        }),
    ) {
        let mut expected = None;
        for (a, row) in counts.iter().enumerate() {
            for (b, &count) in row.iter().enumerate() {
                let best = expected.map_or(0, |(x, y): (usize, usize)| counts[x][y]);
                if count > best {
                    expected = Some((a, b));
                }
            }
        }
        let expected = expected.map(|(a, b)| (a as u32, b as u32));
        let got = most_frequent_pair(&counts);
        holds((got != expected).then(|| {
            format!("counts {counts:?}: returned {got:?}, expected {expected:?}")
        }))?;
    }
}

/// What is wrong with `smoothed(counts)`, or `None`: each probability `(c + 1) / (N +
/// n)` within a few float64 steps.
fn check_smoothed(counts: &[u64]) -> Option<String> {
    let p = smoothed(counts);
    let total = (counts.iter().sum::<u64>() + counts.len() as u64) as f64;
    let expected: Vec<f64> = counts.iter().map(|&c| (c + 1) as f64 / total).collect();
    let close = p.len() == expected.len()
        && p.iter()
            .zip(&expected)
            .all(|(x, e)| (x - e).abs() <= 4.0 * f64::EPSILON * e);
    (!close).then(|| {
        format!("smoothed({counts:?}) returned {p:?}, expected {expected:?}")
    })
}

#[test]
fn exercise_smoothed_adds_one_to_every_count() {
    // [1/6, 2/6, 3/6]; with no counts at all, every outcome alike.
    for counts in [vec![0, 1, 2], vec![0, 0, 0, 0], vec![7]] {
        if let Some(problem) = check_smoothed(&counts) {
            panic!("{problem}");
        }
    }
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_smoothed_on_random_counts(
        counts in prop::collection::vec(0u64..1000, 1..30),
    ) {
        holds(check_smoothed(&counts))?;
    }
}

/// Float32 values between `a` and `b` (0 when equal).
fn ulps(a: f32, b: f32) -> i64 {
    let key = |v: f32| {
        let bits = i64::from(v.to_bits() as i32);
        if bits < 0 {
            i64::from(i32::MIN) - bits
        } else {
            bits
        }
    };
    (key(a) - key(b)).abs()
}

/// What is wrong with `got` against `want`, or `None`: each value within `1e-5` of the
/// largest `|want|`; else the worst value, with its index and its distance in ulps.
fn close(case: &str, got: &Tensor, want: &Tensor) -> Option<String> {
    if got.sizes() != want.sizes() {
        return Some(format!(
            "{case}: shape {:?}, expected {:?}",
            got.sizes(),
            want.sizes()
        ));
    }
    let (got, want) = (got.to_vec(), want.to_vec());
    let scale = want.iter().fold(f32::MIN_POSITIVE, |m, v| m.max(v.abs()));
    let (i, worst) = got
        .iter()
        .zip(&want)
        .map(|(g, w)| {
            if g.is_nan() {
                f32::INFINITY
            } else {
                (g - w).abs()
            }
        })
        .enumerate()
        .fold(
            (0, 0.0f32),
            |best, (i, e)| if e > best.1 { (i, e) } else { best },
        );
    (worst > 1e-5 * scale).then(|| {
        format!(
            "{case}: value {i} is {}, expected {} ({} ulps apart; the largest value is {scale})",
            got[i],
            want[i],
            ulps(got[i], want[i])
        )
    })
}

/// What is wrong with `rms_norm_backward` on random rows of `d` features, or `None`,
/// against the chapter's RMSNorm backward in PyTorch's order (checked against PyTorch's
/// autograd in the chapter's tests).
fn check_rms_norm_backward(seed: u64, rows: usize, d: usize) -> Option<String> {
    manual_seed(seed);
    let mut norm = RMSNorm::with_options(&[d], Some(1e-6), true);
    norm.weight = Some(randn(&[d]) * 0.5 + 1.0);
    let x = randn(&[2, rows, d]);
    let g = randn(&[2, rows, d]);
    let got = rms_norm_backward(&norm, &x, &g);
    let want = rms_norm_backward_in_pytorch_order(&norm, &x, &g, None);
    let case = format!("seed {seed}, x of [2, {rows}, {d}]");
    close(
        &format!("{case}, the input's gradient"),
        &got.input,
        &want.input,
    )
    .or_else(|| {
        close(
            &format!("{case}, the weight's gradient"),
            &got.weight,
            &want.weight,
        )
    })
}

#[test]
fn exercise_rms_norm_backward_matches_the_chapters() {
    for (seed, rows, d) in [(0, 1, 4), (1, 3, 8), (2, 5, 32)] {
        if let Some(problem) = check_rms_norm_backward(seed, rows, d) {
            panic!("{problem}");
        }
    }
}

proptest! {
    #![proptest_config(quiet(32))]

    #[test]
    fn exercise_rms_norm_backward_on_random_rows(
        seed in 0u64..1000,
        rows in 1usize..6,
        d in 2usize..40,
    ) {
        holds(check_rms_norm_backward(seed, rows, d))?;
    }
}

/// What is wrong with `tied_embedding_backward` on random gradients and ids, or `None`,
/// against the two gradients added row by row: the head's, and each looked-up row's
/// gradient added into its token's row.
fn check_tied_embedding(seed: u64, vocab: usize, tokens: usize) -> Option<String> {
    manual_seed(seed);
    let d = 3;
    let grad_head = randn(&[vocab, d]);
    let ids = randint(0, vocab as i64, &[2, tokens]);
    let grad_lookup = randn(&[2, tokens, d]);
    let got = tied_embedding_backward(&grad_head, &ids, &grad_lookup);
    let mut want = grad_head.to_vec();
    for (i, &id) in ids.to_vec().iter().enumerate() {
        for j in 0..d {
            want[id as usize * d + j] += grad_lookup.to_vec()[i * d + j];
        }
    }
    let want = Tensor::from_vec(want, &[vocab, d]);
    let case = format!("seed {seed}, ids {:?}", ids.to_vec());
    close(&case, &got, &want)
}

#[test]
fn exercise_tied_embedding_backward_adds_both_uses() {
    for (seed, vocab, tokens) in [(0, 4, 3), (1, 5, 8), (2, 3, 10)] {
        if let Some(problem) = check_tied_embedding(seed, vocab, tokens) {
            panic!("{problem}");
        }
    }
    // Not the lookup's gradient alone: a token that never occurs still has the head's.
    let grad_head = Tensor::from_vec(vec![1.0, 2.0], &[2, 1]);
    let ids = Tensor::from_vec(vec![0i64], &[1, 1]);
    let grad_lookup = Tensor::from_vec(vec![5.0], &[1, 1, 1]);
    let got = tied_embedding_backward(&grad_head, &ids, &grad_lookup).to_vec();
    let lookup_alone = embedding_backward(&ids, &grad_lookup, 2).to_vec();
    assert_eq!(
        got,
        vec![6.0, 2.0],
        "lookup alone would give {lookup_alone:?}"
    );
}

proptest! {
    #![proptest_config(quiet(64))]

    #[test]
    fn exercise_tied_embedding_backward_on_random_ids(
        seed in 0u64..1000,
        vocab in 1usize..8,
        tokens in 1usize..12,
    ) {
        holds(check_tied_embedding(seed, vocab, tokens))?;
    }
}

#[test]
fn exercise_first_loss_is_the_loss_of_a_fresh_model() {
    for vocab in [2, 84, 512] {
        let want = (vocab as f64).ln();
        let got = first_loss(vocab);
        assert!(
            (got - want).abs() <= 4.0 * f64::EPSILON * want,
            "first_loss({vocab}) returned {got}, expected {want}"
        );
    }
    // A fresh tiny model's loss on a random batch is within a few hundredths of it.
    let vocab = 40;
    let data: Vec<u32> = (0..400).map(|i| (i * 7 % vocab) as u32).collect();
    for arch in [Arch::Gpt2, Arch::Llama] {
        manual_seed(5);
        let model = Model::new(arch, &Config::tiny(vocab)).expect("a model");
        let batch =
            draw_batch(&mut Generator::new(6), &data, 16, 4).expect("a batch");
        let measured = f64::from(loss::<Formulas>(&model, &batch));
        let predicted = first_loss(vocab);
        assert!(
            (measured - predicted).abs() < 0.05,
            "{arch}: first_loss({vocab}) predicted {predicted}, a fresh model measured {measured}"
        );
    }
}

proptest! {
    #![proptest_config(quiet(64))]

    #[test]
    fn exercise_first_loss_for_any_vocabulary(vocab in 1usize..100_000) {
        let want = (vocab as f64).ln();
        let got = first_loss(vocab);
        holds(((got - want).abs() > 4.0 * f64::EPSILON * want.max(1.0)).then(|| {
            format!("first_loss({vocab}) returned {got}, expected {want}")
        }))?;
    }
}
