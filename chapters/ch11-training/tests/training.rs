//! The training run as a whole: the hand-written backward pass against finite differences,
//! training on a fixed batch, and the command line's `--steps` with its progress bar.

use ch11_training::model::AttentionModel;
use ch11_training::task::Task;
use ch11_training::train::{Gradients, loss_and_gradients};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed};

/// The parameter `index` (flat, row-major) of parameter number `which` set to `value`.
fn set(model: &mut AttentionModel, which: usize, index: usize, value: f32) {
    let mut params = model.parameters_mut();
    let p: &mut Tensor = params[which];
    let mut values = p.to_vec();
    values[index] = value;
    *p = Tensor::from_vec(values, p.sizes());
}

/// Every parameter's gradient against a central difference of the loss,
/// `(L(p + h) − L(p − h)) / 2h` with `h = 1e-2`, taken in f64 from the f32 losses, for a
/// few entries of each of the nine parameters. The loss is an f32 sum of about 100 terms,
/// so its rounding noise (~1e-7) divided by 2h is ~1e-5; the difference itself is off by
/// O(h²) ~ 1e-4 times the third derivative. Stated tolerance: 1e-3 + 5 % of the gradient.
#[test]
fn gradients_equal_finite_differences() {
    manual_seed(7);
    let mut model = AttentionModel::new();
    let task = Task::TWO_BACK;
    let ids = task.draw_batch(4);
    let (_, Gradients(grads)) = loss_and_gradients(&model, task, &ids);
    let h = 1e-2f32;
    let mut checked = 0;
    for (which, grad) in grads.iter().enumerate() {
        let grad = grad.to_vec();
        let n = grad.len();
        for index in [0, n / 3, n / 2, n - 1] {
            let original = model.parameters_mut()[which].to_vec()[index];
            set(&mut model, which, index, original + h);
            let up = loss_and_gradients(&model, task, &ids).0 as f64;
            set(&mut model, which, index, original - h);
            let down = loss_and_gradients(&model, task, &ids).0 as f64;
            set(&mut model, which, index, original);
            let estimate = (up - down) / (2.0 * f64::from(h));
            let got = f64::from(grad[index]);
            assert!(
                (got - estimate).abs() <= 1e-3 + 0.05 * estimate.abs(),
                "parameter {which}, entry {index}: backward {got}, finite difference {estimate}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 36);
}

proptest! {
    #![proptest_config(quiet(4))]

    /// Ten AdamW steps on one fixed batch lower its loss, for any initialisation.
    #[test]
    fn loss_decreases_on_a_fixed_batch(seed in 0u64..1_000_000) {
        manual_seed(seed);
        let mut model = AttentionModel::new();
        let task = Task::TWO_BACK;
        let ids = task.draw_batch(8);
        let mut optimizer = ch11_training::adamw::AdamW::new(1e-2);
        let first = ch11_training::train::train_step(&mut model, &mut optimizer, task, &ids);
        for _ in 0..9 {
            ch11_training::train::train_step(&mut model, &mut optimizer, task, &ids);
        }
        let last = loss_and_gradients(&model, task, &ids).0;
        prop_assert!(last < first, "loss {first} became {last}");
    }
}

/// `--steps N` prints one loss line per step, and the progress bar (stderr, terminals only)
/// never reaches the printed text.
#[test]
fn steps_flag_trains_longer_without_a_bar_in_the_output() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ch11-training"))
        .args(["--steps", "3"])
        .output()
        .expect("the chapter binary runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let steps: Vec<&str> = text.lines().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(steps.len(), 3, "{text}");
    assert!(steps[2].starts_with("step   3: loss "));
    assert!(!text.contains('\u{1b}') && !text.contains('\r'));
    assert!(
        out.stderr.is_empty(),
        "stderr is not a terminal here: no bar"
    );
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_ch11-training"))
        .args(["--steps", "0"])
        .output()
        .expect("the chapter binary runs");
    assert!(!refused.status.success());
}

/// The record `TRAINED_FOCUS` of `tests/exercises.rs` is what training gives: the chapter's
/// model trained 100 steps on "the token `shift` places back" (shifts 1 and 3), in 4 fresh
/// sequences, puts its largest head-averaged weight of every scored row `i` on `i − shift`.
/// (With `--features exercise` the training would run through the learner's stubs, so this
/// check of the chapter's own code runs without it.)
#[cfg(not(feature = "exercise"))]
#[test]
fn trained_focus() {
    use ch11_training::model::HEADS;
    use ch11_training::task::TOKENS;
    for shift in [1, 3] {
        manual_seed(2024);
        let mut model = AttentionModel::new();
        let task = Task { shift };
        ch11_training::train::train(&mut model, task, 100, |_, _| {});
        let w = model.attention_weights(&task.draw_batch(4)).to_vec();
        let average = |s: usize, i: usize, j: usize| -> f32 {
            (0..HEADS)
                .map(|h| w[((s * HEADS + h) * TOKENS + i) * TOKENS + j])
                .sum()
        };
        for s in 0..4 {
            for i in shift..TOKENS {
                let largest = (0..=i)
                    .max_by(|&a, &b| average(s, i, a).total_cmp(&average(s, i, b)))
                    .expect("row i has i + 1 weights");
                assert_eq!(
                    largest,
                    i - shift,
                    "shift {shift}, sequence {s}, row {i}"
                );
            }
        }
    }
}

/// A target that is not a class id is refused with PyTorch's message
/// (`F.cross_entropy(torch.zeros(3, 8), torch.tensor([8, 0, 1]))` raises
/// `IndexError: Target 8 is out of bounds.`), instead of reading another row's value.
#[test]
fn cross_entropy_refuses_targets_that_are_not_class_ids() {
    use ch11_training::cross_entropy::f_cross_entropy;
    use shared::{Tensor, zeros};
    let logits = zeros(&[3, 8]);
    for (targets, message) in [
        (vec![8, 0, 1], "cross_entropy: Target 8 is out of bounds."),
        (vec![0, -1, 1], "cross_entropy: Target -1 is out of bounds."),
        (
            vec![1, 2],
            "cross_entropy: Expected input batch_size (3) to match target batch_size (2).",
        ),
    ] {
        let n = targets.len();
        let targets = Tensor::<i64>::from_vec(targets, &[n]);
        let error = f_cross_entropy(&logits, &targets).expect_err("a bad target");
        assert_eq!(error.to_string(), message);
    }
    let fine = Tensor::<i64>::from_vec(vec![7, 0, 1], &[3]);
    let loss = f_cross_entropy(&logits, &fine).expect("class ids").loss;
    assert!((loss - 8f32.ln()).abs() < 1e-6);
}
