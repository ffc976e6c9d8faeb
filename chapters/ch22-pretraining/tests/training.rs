//! The two models and their training against PyTorch's: `tests/fixtures/training.json` is
//! written by `reference/ch22_training_check.py` (PyTorch 2.13.0, one thread, the processor
//! it records) from the same initial weights and the same batches.
//!
//! - The initial weights: the course's generator gives PyTorch's draws, so every
//!   parameter's sum is PyTorch's to the last bit, on any processor.
//! - The loss of the first step, every parameter's gradient there, and the losses of 60
//!   training steps, in PyTorch's order of additions: bit for bit on the reference
//!   platform (see `course::platform`), elsewhere within the repository's tolerance.

use ch19_induction_heads::arithmetic::Formulas;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::batches::get_batch;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::model::Model;
use ch22_pretraining::train::{Settings, loss_and_gradients, train};
use serde_json::Value;
use shared::{manual_seed, set_num_threads};

const FIXTURE: &str = include_str!("fixtures/training.json");

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("valid JSON")
}

/// The fixture's text as character ids, the vocabulary its sorted distinct characters.
fn data(fixture: &Value) -> (usize, Vec<u32>) {
    let text = fixture["text"].as_str().expect("a text");
    let mut vocab: Vec<char> = text.chars().collect();
    vocab.sort_unstable();
    vocab.dedup();
    let ids = text
        .chars()
        .map(|c| vocab.binary_search(&c).expect("in the vocabulary") as u32)
        .collect();
    (vocab.len(), ids)
}

fn hex_words(s: &str) -> Vec<u32> {
    (0..s.len() / 8)
        .map(|i| u32::from_str_radix(&s[8 * i..8 * i + 8], 16).expect("hex"))
        .collect()
}

fn word(v: &Value) -> f32 {
    f32::from_bits(u32::from_str_radix(v.as_str().expect("hex"), 16).expect("hex"))
}

/// The model of the fixture's run `name` (`gpt2-tiny`, ...), built after its seed.
fn model(fixture: &Value, arch: Arch) -> (Model, Config, Vec<u32>) {
    let (vocab, ids) = data(fixture);
    let config = Config::tiny(vocab);
    manual_seed(fixture["seed"].as_u64().expect("a seed"));
    (Model::new(arch, &config).expect("a model"), config, ids)
}

const ARCHS: [Arch; 2] = [Arch::Gpt2, Arch::Llama];

fn on_reference_platform() -> bool {
    let platform = course::platform::platform();
    println!("{platform}");
    platform.is_reference()
}

#[test]
fn the_initial_weights_are_pytorchs() {
    let fixture = fixture();
    for arch in ARCHS {
        let run = &fixture["runs"][format!("{arch}-tiny")];
        let (model, _, _) = model(&fixture, arch);
        for (name, p) in model.named_parameters() {
            let sum: f64 = p.to_vec().iter().map(|&v| f64::from(v)).sum();
            let want = run["init_sums"][&name].as_str().expect(&name);
            let want = f64::from_bits(u64::from_str_radix(want, 16).expect("hex"));
            assert_eq!(sum, want, "{arch} {name}: the sum of the initial weights");
        }
    }
}

#[test]
fn the_first_loss_and_gradients_are_pytorchs() {
    set_num_threads(1);
    let fixture = fixture();
    let exact = on_reference_platform();
    let mut not_bits = Vec::new();
    for arch in ARCHS {
        let run = &fixture["runs"][format!("{arch}-tiny")];
        let (model, config, ids) = model(&fixture, arch);
        let batch = get_batch(&ids, config.context, config.batch).expect("a batch");
        let (loss, grads) = loss_and_gradients::<PytorchOrder>(&model, &batch);
        let want = word(&run["loss0"]);
        println!("{arch}: loss {loss} (PyTorch {want})");
        assert!(
            (loss - want).abs() <= 1e-6 * want,
            "{arch}: loss {loss}, PyTorch {want}"
        );
        if exact {
            assert_eq!(loss.to_bits(), want.to_bits(), "{arch}: the loss's bits");
        }
        let (formula_loss, formula_grads) =
            loss_and_gradients::<Formulas>(&model, &batch);
        assert!((formula_loss - loss).abs() <= 1e-5 * loss);
        for (((name, _), grad), formula) in model
            .named_parameters()
            .into_iter()
            .zip(&grads)
            .zip(&formula_grads)
        {
            let want: Vec<f32> =
                hex_words(run["grads"][&name]["bits"].as_str().expect(&name))
                    .into_iter()
                    .map(f32::from_bits)
                    .collect();
            let ours = grad.to_vec();
            let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let equal = ours
                .iter()
                .zip(&want)
                .filter(|(a, b)| a.to_bits() == b.to_bits())
                .count();
            let worst = ours
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            println!(
                "{arch} {name}: {equal} of {} bit-identical, worst {worst:e} (scale {scale:e})",
                want.len()
            );
            assert!(
                worst <= 1e-5 * scale,
                "{arch} {name}: {worst:e} from PyTorch's (scale {scale:e})"
            );
            if exact && equal != want.len() {
                not_bits.push(format!("{arch} {name}"));
            }
            let off = formula
                .to_vec()
                .iter()
                .zip(&ours)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(
                off <= 1e-4 * scale,
                "{arch} {name}: the formulas are {off:e} from PyTorch's order"
            );
        }
    }
}

#[test]
fn sixty_steps_give_pytorchs_losses() {
    set_num_threads(1);
    let fixture = fixture();
    let exact = on_reference_platform();
    for arch in ARCHS {
        let run = &fixture["runs"][format!("{arch}-tiny")];
        let steps = run["steps"].as_u64().expect("steps") as u32;
        println!(
            "{arch}: PyTorch's clipped norms {:?}",
            &run["grad_norms"].as_array().unwrap()[..3]
        );
        let (mut model, config, ids) = model(&fixture, arch);
        let settings = Settings::short(steps);
        let losses = train::<PytorchOrder>(
            &mut model,
            &ids,
            &config,
            &settings,
            steps,
            |_, _| {},
        )
        .expect("a run");
        let mut same_bits = 0;
        for (step, loss) in losses.iter().enumerate() {
            let printed = run["printed"][step].as_str().expect("printed");
            let want = word(&run["losses"][step]);
            same_bits += usize::from(loss.to_bits() == want.to_bits());
            assert_eq!(
                format!("{loss:.4}"),
                printed,
                "{arch}, step {step}: loss {loss}, PyTorch {want}"
            );
        }
        println!("{arch}: {same_bits} of {steps} losses bit-identical");
        if exact {
            assert_eq!(
                same_bits, steps as usize,
                "{arch}: not every loss has PyTorch's bits"
            );
        }
    }
}

#[test]
fn a_model_of_bad_sizes_is_an_error() {
    let mut config = Config::tiny(10);
    config.n_heads = 0;
    let error = Model::new(Arch::Gpt2, &config).err().expect("an error");
    assert!(error.to_string().contains("n_heads"), "{error}");
}

#[test]
fn the_baby_models_first_steps_print_pytorchs_losses() {
    set_num_threads(1);
    let fixture = fixture();
    let (vocab, ids) = data(&fixture);
    for arch in ARCHS {
        let run = &fixture["runs"][format!("{arch}-baby")];
        let steps = run["steps"].as_u64().expect("steps") as u32;
        let config = Config::baby(vocab);
        manual_seed(fixture["seed"].as_u64().expect("a seed"));
        let mut model = Model::new(arch, &config).expect("a model");
        let settings = Settings::short(steps);
        let losses = train::<PytorchOrder>(
            &mut model,
            &ids,
            &config,
            &settings,
            steps,
            |_, _| {},
        )
        .expect("a run");
        let mut same_bits = 0;
        for (step, loss) in losses.iter().enumerate() {
            let want = word(&run["losses"][step]);
            same_bits += usize::from(loss.to_bits() == want.to_bits());
            let printed = run["printed"][step].as_str().expect("printed");
            assert_eq!(
                format!("{loss:.4}"),
                printed,
                "{arch} baby, step {step}: loss {loss}, PyTorch {want}"
            );
        }
        println!("{arch} baby: {same_bits} of {steps} losses bit-identical");
    }
}
