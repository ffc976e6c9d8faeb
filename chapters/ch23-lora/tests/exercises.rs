//! The exercises' tests: each `exercise_NAME*` test checks exercise `NAME` alone, on small
//! made-up inputs or chapter 20's tiny checkpoint.

use ch23_lora::Lora;
use ch23_lora::answers::GradOfA;
use ch23_lora::count::trainable_numbers;
use ch23_lora::first_step::grad_of_a_at_start;
use ch23_lora::masked_loss::{IGNORE, masked_cross_entropy};
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

/// Targets as a tensor.
fn ids(targets: &[i64]) -> Tensor<i64> {
    Tensor::from_vec(targets.to_vec(), &[targets.len()])
}

/// The loss the long way: each counted row's −log p of its target, in float64.
fn masked_loss_f64(logits: &Tensor, targets: &[i64]) -> Option<f64> {
    let classes = logits.size(1);
    let values = logits.to_vec();
    let mut total = 0.0;
    let mut counted = 0;
    for (row, &t) in targets.iter().enumerate() {
        if t == IGNORE {
            continue;
        }
        let z: Vec<f64> = values[row * classes..(row + 1) * classes]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let max = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let log_sum = z.iter().map(|v| (v - max).exp()).sum::<f64>().ln() + max;
        total += log_sum - z[t as usize];
        counted += 1;
    }
    (counted > 0).then(|| total / f64::from(counted))
}

#[test]
fn exercise_masked_cross_entropy_counts_only_the_labelled_rows() {
    manual_seed(0);
    let logits = randn(&[5, 7]);
    let targets = [IGNORE, 3, IGNORE, 0, 6];
    let ours = masked_cross_entropy(&logits, &ids(&targets)).unwrap();
    let want = masked_loss_f64(&logits, &targets).unwrap();
    assert!(
        (f64::from(ours) - want).abs() < 1e-5,
        "targets {targets:?}: loss {ours}, expected {want} (the mean over the 3 labelled rows)"
    );
    let none = masked_cross_entropy(&logits, &ids(&[IGNORE; 5]));
    assert!(
        none.is_err(),
        "every label ignored: expected an error, got {none:?}"
    );
}

proptest! {
    #![proptest_config(quiet(32))]
    #[test]
    fn exercise_masked_cross_entropy_for_any_mask(
        seed in 0u64..1000,
        rows in 1usize..9,
        mask in prop::collection::vec(any::<bool>(), 9),
    ) {
        manual_seed(seed);
        let logits = randn(&[rows, 6]);
        let targets: Vec<i64> = (0..rows)
            .map(|r| if mask[r] { IGNORE } else { (r * 5 % 6) as i64 })
            .collect();
        let ours = masked_cross_entropy(&logits, &ids(&targets));
        holds(match (ours, masked_loss_f64(&logits, &targets)) {
            (Ok(l), Some(w)) if (f64::from(l) - w).abs() < 1e-5 => None,
            (Err(_), None) => None,
            (got, want) => Some(format!("targets {targets:?}: got {got:?}, expected {want:?}")),
        })?;
    }
}

#[test]
fn exercise_trainable_numbers_of_smollm2s_queries_and_values() {
    // Rank 8 beside W_q (576 → 576) and W_v (576 → 192) in 30 layers.
    let got = trainable_numbers(8, 30, &[(576, 576), (192, 576)]);
    assert_eq!(
        got, 460_800,
        "rank 8 on q_proj and v_proj of SmolLM2's 30 layers"
    );
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_trainable_numbers_for_any_shapes(
        rank in 1usize..17,
        layers in 0usize..40,
        projections in prop::collection::vec((1usize..2000, 1usize..2000), 0..7),
    ) {
        let want: usize = layers * projections.iter().map(|&(o, i)| rank * (o + i)).sum::<usize>();
        let got = trainable_numbers(rank, layers, &projections);
        holds((got != want).then(|| format!(
            "rank {rank}, {layers} layers, projections {projections:?}: got {got}, expected {want}"
        )))?;
    }
}

/// The gradients by finite differences of `L = Σ grad_y ⊙ y`, which is linear in each
/// entry: a difference of one step is exact up to rounding.
fn lora_grads_by_differences(
    lora: &Lora,
    x: &Tensor,
    grad_y: &Tensor,
) -> (Vec<f64>, Vec<f64>) {
    let loss = |l: &Lora| -> f64 {
        let y = l.delta(x);
        y.to_vec()
            .iter()
            .zip(grad_y.to_vec())
            .map(|(&a, b)| f64::from(a) * f64::from(b))
            .sum()
    };
    let base = loss(lora);
    let along = |which: usize| -> Vec<f64> {
        let m = if which == 0 { &lora.a } else { &lora.b };
        (0..m.numel())
            .map(|e| {
                let mut moved = lora.clone();
                let target = if which == 0 {
                    &mut moved.a
                } else {
                    &mut moved.b
                };
                let mut values = target.to_vec();
                values[e] += 1.0;
                *target = Tensor::from_vec(values, target.sizes());
                loss(&moved) - base
            })
            .collect()
    };
    (along(0), along(1))
}

#[test]
fn exercise_lora_grads_match_the_outputs_change() {
    for (seed, rank, tokens) in [(0u64, 2usize, 3usize), (1, 3, 5), (2, 1, 1)] {
        manual_seed(seed);
        let mut lora = Lora::new(5, 4, rank, 2.0 * rank as f64);
        lora.b = randn(&[4, rank]);
        let x = randn(&[2, tokens, 5]);
        let grad_y = randn(&[2, tokens, 4]);
        let got = lora.grads(&x, &grad_y);
        assert_eq!(
            got.a.sizes(),
            &[rank, 5],
            "seed {seed}: the shape of A's gradient"
        );
        assert_eq!(
            got.b.sizes(),
            &[4, rank],
            "seed {seed}: the shape of B's gradient"
        );
        let (want_a, want_b) = lora_grads_by_differences(&lora, &x, &grad_y);
        for (what, ours, want) in
            [("A", got.a.to_vec(), want_a), ("B", got.b.to_vec(), want_b)]
        {
            for (e, (o, w)) in ours.iter().zip(&want).enumerate() {
                assert!(
                    (f64::from(*o) - w).abs() < 1e-3 * (1.0 + w.abs()),
                    "seed {seed}, rank {rank}: the gradient of {what}[{e}] is {o}, expected {w}"
                );
            }
        }
    }
}

#[test]
fn exercise_grad_of_a_at_start_is_what_the_backward_computes() {
    let chosen = grad_of_a_at_start();
    // What the backward pass computes with B = 0.
    manual_seed(4);
    let lora = Lora::new(6, 5, 3, 6.0);
    let grads = ch23_lora::lora::projection_backward::<
        ch19_induction_heads::arithmetic::Formulas,
    >(
        &shared::nn::Linear::new(6, 5, false),
        Some(&lora),
        &randn(&[4, 6]),
        &randn(&[4, 5]),
    );
    let (_, g) = grads.adapter.unwrap();
    let largest = g.a.abs().max().item();
    assert_eq!(largest, 0.0);
    assert_eq!(
        chosen,
        GradOfA::Zero,
        "with B = 0 the largest entry of A's gradient is {largest}: A's gradient goes through B"
    );
}
