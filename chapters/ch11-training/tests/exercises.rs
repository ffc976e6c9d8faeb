//! One test per exercise, named after it, so `cargo test -p ch11-training --features
//! exercise NAME` checks just that function. Each checks what the function must compute
//! (a formula in f64, a closed form, a property of a trained model) on inputs a hard-coded
//! answer cannot foresee; the output tests then check the last bits against PyTorch.

use ch11_training::adamw::{AdamW, adamw_update};
use ch11_training::cross_entropy::{cross_entropy, cross_entropy_backward};
use ch11_training::embedding_backward::embedding_backward;
use ch11_training::model::{AttentionModel, HEADS};
use ch11_training::prediction::predicted_focus;
use ch11_training::task::{TOKENS, Task, VOCAB};
use ch11_training::train::train;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randint, randn};

/// Random logits `[rows, classes]` (spread out by 3) and targets, from `seed`.
fn logits_and_targets(seed: u64, rows: usize, classes: usize) -> (Tensor, Tensor<i64>) {
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

/// Trains the chapter's model on "the token `shift` places back" and returns, for a few
/// fresh sequences, the weights averaged over the heads, `[sequences, TOKENS, TOKENS]`
/// as nested vectors.
fn trained_average_weights(shift: usize) -> Vec<Vec<Vec<f32>>> {
    manual_seed(2024);
    let mut model = AttentionModel::new();
    let task = Task { shift };
    train(&mut model, task, 100, |_, _| {});
    let ids = task.draw_batch(4);
    let w = model.attention_weights(&ids).to_vec();
    let at =
        |s: usize, h: usize, i: usize, j: usize| w[((s * HEADS + h) * TOKENS + i) * TOKENS + j];
    (0..4)
        .map(|s| {
            (0..TOKENS)
                .map(|i| {
                    (0..TOKENS)
                        .map(|j| (0..HEADS).map(|h| at(s, h, i, j)).sum::<f32>() / HEADS as f32)
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Your prediction against trained models: for shifts 1 and 3 (the chapter shows 2),
/// every row the task scores must put its largest weight where you predicted, and the rows
/// it does not score must be `None`.
#[test]
fn exercise_predicted_focus_matches_trained_attention() {
    for shift in [1, 3] {
        for (s, sequence) in trained_average_weights(shift).iter().enumerate() {
            for (i, row) in sequence.iter().enumerate() {
                let largest = (0..=i)
                    .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                    .expect("row i has i + 1 weights");
                let predicted = predicted_focus(shift, i);
                if i < shift {
                    assert_eq!(predicted, None, "shift {shift}: position {i} has no target");
                } else {
                    assert_eq!(
                        predicted,
                        Some(largest),
                        "shift {shift}, sequence {s}: position {i} looks hardest at \
                         {largest} (weights {row:?})"
                    );
                }
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
