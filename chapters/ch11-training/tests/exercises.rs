//! One test per exercise, named after it, so `cargo test -p ch11-training --features
//! exercise NAME` checks just that function. Each checks what the function must compute
//! (a formula in f64, a closed form, a property of a trained model) on inputs a hard-coded
//! answer cannot foresee; the output tests then check the last bits against PyTorch.

use ch11_training::adamw::{AdamW, adamw_update};
use ch11_training::bias_correction::uncorrected_first_step;
use ch11_training::cross_entropy::{cross_entropy, cross_entropy_backward};
use ch11_training::embedding_backward::embedding_backward;
use ch11_training::prediction::predicted_focus;
use ch11_training::task::{TOKENS, VOCAB};
use ch11_training::weight_decay::steps_to_halve;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randint, randn};

/// Random logits `[rows, classes]` (spread out by 3) and targets, from `seed`.
fn logits_and_targets(
    seed: u64,
    rows: usize,
    classes: usize,
) -> (Tensor, Tensor<i64>) {
    manual_seed(seed);
    let logits = &randn(&[rows, classes]) * 3.0;
    (logits, randint(0, classes as i64, &[rows]))
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Every entry is `(softmax − onehot) / rows`, computed here in f64 from the logits;
    /// so every row sums to zero.
    #[test]
    fn exercise_cross_entropy_backward_is_softmax_minus_onehot(
        seed in 0u64..10_000, rows in 1usize..40, classes in 2usize..12,
    ) {
        let (logits, targets) = logits_and_targets(seed, rows, classes);
        let ce = cross_entropy(&logits, &targets);
        let grad = cross_entropy_backward(&ce.log_probs, &targets).to_vec();
        prop_assert_eq!(grad.len(), rows * classes);
        let z = logits.to_vec();
        for (r, t) in targets.to_vec().into_iter().enumerate() {
            let row = &z[r * classes..(r + 1) * classes];
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let total: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
            let mut row_sum = 0.0f64;
            for (j, &v) in row.iter().enumerate() {
                let p = (v as f64 - max).exp() / total;
                let onehot = if j as i64 == t { 1.0 } else { 0.0 };
                let want = (p - onehot) / rows as f64;
                let got = grad[r * classes + j] as f64;
                prop_assert!((got - want).abs() <= 1e-6 / rows as f64 + 1e-6 * want.abs(),
                    "row {r}, class {j}: got {got}, want {want}");
                row_sum += got;
            }
            prop_assert!(row_sum.abs() <= 1e-6, "row {r} sums to {row_sum}");
        }
    }

    /// Each table row collects the gradients of exactly the positions that looked it up
    /// (compared with an f64 sum); rows nobody looked up stay zero; a row looked up once
    /// gets that position's gradient exactly.
    #[test]
    fn exercise_embedding_backward_collects_rows(
        seed in 0u64..10_000, batch in 1usize..5, tokens in 1usize..9, vocab in 1usize..10,
        dim in 1usize..6,
    ) {
        manual_seed(seed);
        let ids = randint(0, vocab as i64, &[batch, tokens]);
        let grad_out = randn(&[batch, tokens, dim]);
        let grad = embedding_backward(&ids, &grad_out, vocab);
        prop_assert_eq!(grad.sizes(), [vocab, dim]);
        let (ids, g, got) = (ids.to_vec(), grad_out.to_vec(), grad.to_vec());
        for row in 0..vocab {
            let uses: Vec<usize> = (0..ids.len()).filter(|&i| ids[i] == row as i64).collect();
            for j in 0..dim {
                let want: f64 = uses.iter().map(|&i| g[i * dim + j] as f64).sum();
                let got = got[row * dim + j];
                match uses.len() {
                    0 => prop_assert_eq!(got.to_bits(), 0.0f32.to_bits()),
                    1 => prop_assert_eq!(got, g[uses[0] * dim + j]),
                    _ => prop_assert!((got as f64 - want).abs() <= 1e-5 * (1.0 + want.abs())),
                }
            }
        }
    }

    /// Step 1 from zero moments has a closed form: `m = (1−β₁)g`, `v = (1−β₂)g²`, and
    /// the bias corrections turn the step into `lr · g / (|g| + eps)`, about `lr` against
    /// the sign of the gradient whatever its size.
    #[test]
    fn exercise_adamw_update_first_step_closed_form(
        p0 in -3.0f32..3.0, g in prop_oneof![-5.0f32..-1e-3, 1e-3f32..5.0],
        lr in prop_oneof![Just(1e-2), Just(1e-3), Just(0.1)],
    ) {
        let optimizer = AdamW::new(lr);
        let k = optimizer.constants(1);
        let (mut p, mut m, mut v) = (p0, 0.0f32, 0.0f32);
        adamw_update(&mut p, g, &mut m, &mut v, &k);
        let (g64, p64) = (g as f64, p0 as f64);
        prop_assert!((m as f64 - 0.1 * g64).abs() <= 1e-6 * g64.abs());
        prop_assert!((v as f64 - 1e-3 * g64 * g64).abs() <= 1e-6 * g64 * g64);
        let want = p64 * (1.0 - lr * 0.01) - lr * g64 / (g64.abs() + 1e-8);
        prop_assert!((p as f64 - want).abs() <= 1e-6 * (1.0 + p64.abs()),
            "p0 {p0}, g {g}: got {p}, want {want}");
    }
}

/// With a constant gradient, `m / √v` stays near ±1 after the bias corrections, so every
/// step moves the parameter by about `lr`, against the gradient.
#[test]
fn exercise_adamw_update_moves_by_about_lr() {
    let optimizer = AdamW::new(1e-2);
    let (mut p, mut m, mut v) = (1.0f32, 0.0f32, 0.0f32);
    for t in 1..=20 {
        let before = p;
        adamw_update(&mut p, 0.37, &mut m, &mut v, &optimizer.constants(t));
        let moved = (before - p) as f64;
        assert!((moved - 1e-2).abs() < 2e-4, "step {t} moved {moved}");
    }
}

/// Where models trained by the chapter's own code look hardest (the weights averaged over
/// the heads), for every row the task scores: `(shift, focus)` with `focus[r]` the key
/// row `shift + r` looks at, the same in each of 4 fresh sequences. Recorded from
/// `trained_focus` in `tests/training.rs`, which retrains and checks this table, so this
/// test runs your prediction alone, without training through your other exercises.
const TRAINED_FOCUS: [(usize, [usize; 8]); 2] = [
    (1, [0, 1, 2, 3, 4, 5, 6, usize::MAX]),
    (3, [0, 1, 2, 3, 4, usize::MAX, usize::MAX, usize::MAX]),
];

/// Your prediction against trained models: for shifts 1 and 3 (the chapter shows 2),
/// every row the task scores must be where the trained attention looks hardest, and the
/// rows it does not score must be `None`.
#[test]
fn exercise_predicted_focus_matches_trained_attention() {
    assert_eq!(TOKENS, 8);
    for (shift, focus) in TRAINED_FOCUS {
        for i in 0..TOKENS {
            let predicted = predicted_focus(shift, i);
            if i < shift {
                assert_eq!(
                    predicted, None,
                    "shift {shift}: position {i} has no target"
                );
            } else {
                assert_eq!(
                    predicted,
                    Some(focus[i - shift]),
                    "shift {shift}: a trained model's position {i} looks hardest at {}",
                    focus[i - shift]
                );
            }
        }
    }
}

/// Equal logits give the uniform distribution, whose gradient is known exactly enough.
#[test]
fn exercise_cross_entropy_backward_of_uniform_logits() {
    // All logits equal: p = 1/VOCAB everywhere, so the gradient is (1/VOCAB − onehot)/rows.
    let rows = 4;
    let logits = shared::zeros(&[rows, VOCAB]);
    let targets = Tensor::from_vec(vec![0i64, 3, 7, 3], &[rows]);
    let ce = cross_entropy(&logits, &targets);
    assert!((ce.loss as f64 - (VOCAB as f64).ln()).abs() < 1e-6);
    let grad = cross_entropy_backward(&ce.log_probs, &targets).to_vec();
    for (r, &t) in [0usize, 3, 7, 3].iter().enumerate() {
        for j in 0..VOCAB {
            let onehot = if j == t { 1.0 } else { 0.0 };
            let want = (1.0 / VOCAB as f64 - onehot) / rows as f64;
            assert!((grad[r * VOCAB + j] as f64 - want).abs() < 1e-7);
        }
    }
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Measured: one step of Adam without the corrections, from zero moments, written out
    /// in f64 (no weight decay, no eps) for a random gradient. It moves by your prediction,
    /// whatever the gradient's size.
    #[test]
    fn exercise_uncorrected_first_step_is_measured(
        lr in 1e-4f64..1.0, beta1 in 0.5f64..0.99, beta2 in 0.9f64..0.9999,
        g in prop_oneof![-100.0f64..-1e-3, 1e-3f64..100.0], p0 in -3.0f64..3.0,
    ) {
        let m = beta1 * 0.0 + (1.0 - beta1) * g;
        let v = beta2 * 0.0 + (1.0 - beta2) * g * g;
        let p1 = p0 - lr * m / v.sqrt();
        let moved = (p1 - p0).abs();
        let predicted = uncorrected_first_step(lr, beta1, beta2);
        prop_assert!((predicted - moved).abs() <= 1e-9 * moved,
            "lr {lr}, betas ({beta1}, {beta2}), g {g}: moved {moved}, predicted {predicted}");
    }

    /// Measured: a parameter with a zero gradient, stepped by AdamW's decay (in f64) until
    /// it is at most half its start, takes your number of steps (give or take one, for
    /// the roundings of the repeated product).
    #[test]
    fn exercise_steps_to_halve_is_measured(
        lr in 1e-3f64..0.5, weight_decay in 1e-3f64..0.5,
    ) {
        let mut p = 1.0f64;
        let mut steps = 0u64;
        while p > 0.5 {
            p *= 1.0 - lr * weight_decay;
            steps += 1;
        }
        let predicted = steps_to_halve(lr, weight_decay);
        prop_assert!(predicted.abs_diff(steps) <= 1,
            "lr {lr}, wd {weight_decay}: halved after {steps} steps, predicted {predicted}");
    }
}

/// The chapter's optimizer, step by step on a parameter that gets no gradient (the
/// chapter's own AdamW, `pytorch_order`'s update, so this does not run your
/// `adamw_update`): after your count for lr = wd = 0.01 the weight is half its start, to
/// the 0.1 % that float32's roundings of thousands of products allow.
#[test]
fn exercise_steps_to_halve_for_the_chapters_adamw() {
    use ch11_training::pytorch_order::adamw_update_in_pytorch_order;
    let optimizer = AdamW::new(1e-2);
    let predicted = steps_to_halve(optimizer.lr, optimizer.weight_decay);
    assert!(predicted < 100_000, "{predicted} steps");
    let (mut p, mut m, mut v) = (1.0f32, 0.0f32, 0.0f32);
    for t in 1..=predicted as u32 {
        adamw_update_in_pytorch_order(
            &mut p,
            0.0,
            &mut m,
            &mut v,
            &optimizer.constants(t),
        );
    }
    assert!(
        (p - 0.5).abs() < 1e-3,
        "after {predicted} steps the weight is {p}"
    );
}
