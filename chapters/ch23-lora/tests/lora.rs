//! The adapters on chapter 20's tiny checkpoint: the forward pass with zero `B` is chapter
//! 15's, the backward pass is the gradient (against the formulas and against the loss's
//! own change), the merge keeps the logits within a derived bound, and PEFT's files go
//! both ways with PEFT's own logits.

use ch19_induction_heads::arithmetic::Formulas;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::examples::batch;
use ch23_lora::forward::forward;
use ch23_lora::lora::{Lora, projection_backward};
use ch23_lora::peft;
use ch23_lora::setup::{SEED, in_workspace};
use ch23_lora::tiny::{EXAMPLE, TinyRun};
use ch23_lora::train::loss_and_gradients;
use shared::nn::Linear;
use shared::{Tensor, manual_seed, randn};

fn fixture(name: &str) -> std::path::PathBuf {
    in_workspace(&format!("chapters/ch23-lora/tests/fixtures/{name}"))
}

/// The largest difference, and where.
fn largest_gap(ours: &Tensor, theirs: &Tensor) -> (f32, usize) {
    ours.to_vec()
        .iter()
        .zip(theirs.to_vec())
        .map(|(a, b)| (a - b).abs())
        .enumerate()
        .fold(
            (0.0, 0),
            |best, (i, d)| if d > best.0 { (d, i) } else { best },
        )
}

#[test]
fn zero_b_gives_the_models_own_logits_bit_for_bit() {
    let run = TinyRun::new(SEED).unwrap();
    let ids = run.example_ids().unwrap();
    let adapted = forward(&run.loaded.model, &run.loaded.recipe, &run.adapter, &ids);
    let (own, _) = run.loaded.model.forward(&ids, &run.loaded.recipe);
    let (gap, at) = largest_gap(&adapted, &own);
    assert_eq!(
        gap,
        0.0,
        "logit {at}: adapted {} vs own {}",
        adapted.flatten(0, -1).get(at as i64).item(),
        own.flatten(0, -1).get(at as i64).item()
    );
}

/// Every adapter's `B` drawn, so that both `A` and `B` have gradients.
fn with_drawn_b(run: &mut TinyRun) {
    manual_seed(5);
    for lora in run.adapter.layers.iter_mut().flatten() {
        lora.b = randn(lora.b.sizes()) * 0.1;
    }
}

#[test]
fn the_gradients_are_the_losss_slope() {
    let mut run = TinyRun::new(SEED).unwrap();
    with_drawn_b(&mut run);
    let examples: Vec<_> = run.sums.train[..3]
        .iter()
        .map(|s| run.encoder.example(s).unwrap())
        .collect();
    let b = batch(&examples, run.encoder.eos);
    let model = &run.loaded.model;
    let recipe = &run.loaded.recipe;
    let (_, grads) =
        loss_and_gradients::<Formulas>(model, recipe, &run.adapter, &b).unwrap();
    // A central difference on a few entries of each matrix, in float64 steps of the loss.
    let names: Vec<String> = run
        .adapter
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for (p, name) in names.iter().enumerate() {
        for entry in [0usize, 7] {
            let eps = 1e-2f32;
            let mut shifted = |delta: f32| {
                let mut params = run.adapter.parameters_mut();
                let mut values = params[p].to_vec();
                values[entry] += delta;
                *params[p] = Tensor::from_vec(values, params[p].sizes());
                let (loss, _) =
                    loss_and_gradients::<Formulas>(model, recipe, &run.adapter, &b)
                        .unwrap();
                let mut params = run.adapter.parameters_mut();
                let mut values = params[p].to_vec();
                values[entry] -= delta;
                *params[p] = Tensor::from_vec(values, params[p].sizes());
                loss
            };
            let slope = (shifted(eps) - shifted(-eps)) / (2.0 * eps);
            let grad = grads[p].to_vec()[entry];
            assert!(
                (slope - grad).abs() <= 2e-3 + 0.05 * grad.abs(),
                "{name}[{entry}]: gradient {grad}, the loss's slope {slope}"
            );
        }
    }
}

#[test]
fn pytorchs_order_gives_the_formulas_gradients_within_rounding() {
    let mut run = TinyRun::new(SEED).unwrap();
    with_drawn_b(&mut run);
    let examples: Vec<_> = run.sums.train[..4]
        .iter()
        .map(|s| run.encoder.example(s).unwrap())
        .collect();
    let b = batch(&examples, run.encoder.eos);
    let (m, r) = (&run.loaded.model, &run.loaded.recipe);
    let (l1, g1) = loss_and_gradients::<Formulas>(m, r, &run.adapter, &b).unwrap();
    let (l2, g2) =
        loss_and_gradients::<PytorchOrder>(m, r, &run.adapter, &b).unwrap();
    assert!((l1 - l2).abs() <= 1e-5 * l1.abs(), "loss {l1} vs {l2}");
    for ((name, _), (a, b)) in run
        .adapter
        .named_parameters()
        .iter()
        .zip(g1.iter().zip(&g2))
    {
        let scale = a.abs().max().item();
        let (gap, at) = largest_gap(a, b);
        assert!(
            gap <= 1e-4 * scale,
            "{name}[{at}]: formulas vs PyTorch's order differ by {gap} (largest {scale})"
        );
    }
}

#[test]
fn the_adapters_backward_is_its_formula() {
    manual_seed(3);
    let base = Linear::new(12, 10, false);
    let mut lora = Lora::new(12, 10, 4, 8.0);
    lora.b = randn(&[10, 4]);
    let x = randn(&[2, 5, 12]);
    let grad_y = randn(&[2, 5, 10]);
    let by_pieces = projection_backward::<Formulas>(&base, Some(&lora), &x, &grad_y);
    let (_, pieces) = by_pieces.adapter.unwrap();
    let formula = lora.grads(&x, &grad_y);
    for (what, ours, theirs) in
        [("A", &formula.a, &pieces.a), ("B", &formula.b, &pieces.b)]
    {
        let (gap, at) = largest_gap(ours, theirs);
        assert!(
            gap <= 1e-4,
            "{what}[{at}]: the formula and the backward pass differ by {gap}"
        );
    }
}

/// One float32 step: the unit roundoff.
const U: f32 = f32::EPSILON / 2.0;

#[test]
fn merging_keeps_a_projections_output_within_the_bound_of_its_roundings() {
    // Beside: W x + s·B(A x); merged: (W + s·B A) x. Each is a sum of d_in + r products
    // rounded at most d_in + r + 2 times, so each differs from the exact value by at most
    // γ·Σ|terms| with γ = k·u/(1 − k·u), k = d_in + r + 2 (Higham's bound for a dot
    // product), and the two differ by at most twice that.
    manual_seed(11);
    let (d_in, d_out, r) = (64, 32, 8);
    let base = Linear::new(d_in, d_out, false);
    let mut lora = Lora::new(d_in, d_out, r, 16.0);
    lora.b = randn(&[d_out, r]);
    let x = randn(&[3, 7, d_in]);
    let beside = lora.forward(&base, &x);
    let merged = Linear::from_parameters(lora.merged(&base.weight), None).forward(&x);
    let k = (d_in + r + 2) as f32;
    let gamma = k * U / (1.0 - k * U);
    let terms = x.abs().matmul(&base.weight.abs().t())
        + x.abs().matmul(&lora.a.abs().t()).matmul(&lora.b.abs().t()) * lora.scale;
    let bound = terms * (2.0 * gamma);
    for ((i, gap), limit) in (&merged - &beside)
        .abs()
        .to_vec()
        .into_iter()
        .enumerate()
        .zip(bound.to_vec())
    {
        assert!(
            gap <= limit,
            "output {i}: merged and beside differ by {gap}, the bound is {limit}"
        );
    }
}

#[test]
fn the_rank_counts_the_numbers_that_train() {
    let run = TinyRun::new(SEED).unwrap();
    // q: 64 → 64, v: 64 → 32, rank 8, 2 layers.
    assert_eq!(run.adapter.trainable(), 2 * (8 * (64 + 64) + 8 * (64 + 32)));
    let config = LoraConfig::new(2, 4.0, &["o_proj", "down_proj", "q_proj"]).unwrap();
    let adapter = Adapter::new(&run.loaded.model, &config).unwrap();
    assert_eq!(
        adapter.trainable(),
        2 * 2 * ((64 + 64) + (64 + 64) + (192 + 64))
    );
}

/// The logits of the example with `adapter`, and PEFT's from `file`.
fn against_peft(adapter: &Adapter, run: &TinyRun, file: &str) {
    let theirs = safetensors_f32(&fixture(file), "logits");
    let ids = run.example_ids().unwrap();
    let ours = forward(&run.loaded.model, &run.loaded.recipe, adapter, &ids);
    // Within rounding: the adapter's thin products (8 columns) do not all add in MKL's
    // order yet, so a trained adapter's logits can differ in their last bits.
    let (gap, at) = largest_gap(&ours, &theirs);
    let scale = theirs.abs().max().item();
    assert!(
        gap <= 1e-5 * scale,
        "{file}: logit {at} differs by {gap} from PEFT's (largest {scale})"
    );
}

fn safetensors_f32(path: &std::path::Path, name: &str) -> Tensor {
    let bytes = std::fs::read(path).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let view = file.tensor(name).unwrap();
    let values = view
        .data()
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    Tensor::from_vec(values, view.shape())
}

#[test]
fn the_course_loads_pefts_adapter_with_its_logits() {
    let run = TinyRun::new(SEED).unwrap();
    let adapter = peft::load(&fixture("peft"), &run.loaded.model).unwrap();
    against_peft(&adapter, &run, "peft/logits.safetensors");
}

#[test]
fn peft_loads_the_courses_adapter_with_its_logits() {
    let mut run = TinyRun::new(SEED).unwrap();
    run.train().unwrap();
    // The committed folder is what the course saves for this run ...
    let saved =
        std::env::temp_dir().join(format!("ch23-ours-{}", std::process::id()));
    peft::save(&run.adapter, "tiny-llama", &saved).unwrap();
    let ours = std::fs::read(saved.join(peft::WEIGHTS)).unwrap();
    let committed = std::fs::read(fixture("ours").join(peft::WEIGHTS)).unwrap();
    std::fs::remove_dir_all(&saved).unwrap();
    assert!(
        ours == committed,
        "the saved adapter differs from tests/fixtures/ours: run reference/ch23_lora.py --fixtures"
    );
    // ... and PEFT, loading it, computed the course's logits.
    against_peft(&run.adapter, &run, "ours-by-peft.safetensors");
    // The same example PEFT ran.
    let ids = safetensors_i64(&fixture("ours-by-peft.safetensors"), "ids");
    assert_eq!(
        ids,
        run.encoder
            .example(&EXAMPLE)
            .unwrap()
            .ids
            .iter()
            .map(|&i| i64::from(i))
            .collect::<Vec<_>>()
    );
}

fn safetensors_i64(path: &std::path::Path, name: &str) -> Vec<i64> {
    let bytes = std::fs::read(path).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let view = file.tensor(name).unwrap();
    view.data()
        .chunks(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

mod the_task {
    use ch23_lora::examples::batch;
    use ch23_lora::masked_loss::IGNORE;
    use ch23_lora::setup::{HELD_OUT, OPERANDS};
    use ch23_lora::task::split;
    use course::quiet_proptest::{holds, quiet};
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(quiet(16))]
        #[test]
        fn no_held_out_sum_is_ever_trained_on(seed in any::<u64>()) {
            manual_seed(seed);
            let sums = split(HELD_OUT).unwrap();
            let mut held: Vec<u32> = sums.held_out.iter().map(|s| s.code()).collect();
            held.sort_unstable();
            held.dedup();
            let all = (OPERANDS * OPERANDS) as usize;
            let broken = if held.len() != HELD_OUT {
                Some(format!("seed {seed}: {} distinct held-out sums, not {HELD_OUT}", held.len()))
            } else if let Some(s) = sums.train.iter().find(|s| held.binary_search(&s.code()).is_ok()) {
                Some(format!("seed {seed}: {} + {} is held out and trained on", s.a, s.b))
            } else if sums.train.len() + held.len() != all {
                Some(format!("seed {seed}: {} training sums, not {}", sums.train.len(), all - HELD_OUT))
            } else {
                None
            };
            holds(broken)?;
        }
    }

    #[test]
    fn only_the_answers_tokens_are_labelled() {
        let run = TinyRun::new(SEED).unwrap();
        let examples: Vec<_> = run.sums.train[..3]
            .iter()
            .map(|s| run.encoder.example(s).unwrap())
            .collect();
        let b = batch(&examples, run.encoder.eos);
        let labels = b.labels.to_vec();
        let longest = b.ids.size(1);
        for (row, e) in examples.iter().enumerate() {
            for t in 0..longest {
                let label = labels[row * longest + t];
                let want = if t >= e.prompt_len && t < e.ids.len() {
                    i64::from(e.ids[t])
                } else {
                    IGNORE
                };
                assert_eq!(
                    label,
                    want,
                    "example {row}, position {t} (prompt {}, length {})",
                    e.prompt_len,
                    e.ids.len()
                );
            }
        }
    }
}
