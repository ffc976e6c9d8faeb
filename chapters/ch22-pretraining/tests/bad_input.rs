//! Bad input gets a clear error naming what is wrong, never a panic: a context longer
//! than the model's, zero steps or an empty batch, a learning rate so large that the loss
//! stops being a number, an unknown architecture or tokenizer on the command line. None of
//! these needs the text.

use std::process::Command;

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::model::Model;
use ch22_pretraining::runs::{EvalBatches, Plan, run};
use ch22_pretraining::sample::sample;
use shared::manual_seed;
use shared::rng::Generator;

/// A small text of `vocab` token ids.
fn data(vocab: usize) -> Vec<u32> {
    (0..600).map(|i| (i * 7 % vocab) as u32).collect()
}

/// The error of a tiny run of `arch` with `plan`, built at `model_config`.
fn run_error(arch: Arch, model_config: &Config, plan: &Plan) -> String {
    manual_seed(1);
    let mut model = Model::new(arch, model_config).expect("a model");
    let ids = data(model_config.vocab_size);
    let batches =
        EvalBatches::new(&ids, &ids, &model_config.clone()).expect("batches");
    let result =
        run::<PytorchOrder>(&mut model, &ids, &batches, plan, |_, _| {}, |_, _| {});
    match result {
        Ok(log) => panic!("{arch}: expected an error, the run gave {log:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_context_longer_than_the_models_is_an_error() {
    let config = Config::tiny(20);
    let mut longer = config;
    longer.context = 2 * config.context;
    for arch in [Arch::Gpt2, Arch::Llama] {
        let error = run_error(arch, &config, &Plan::of(longer, 3));
        assert!(
            error.contains("32 tokens is longer than the model's 16"),
            "{arch}: {error}"
        );
    }
}

#[test]
fn zero_steps_is_an_error() {
    let config = Config::tiny(20);
    let error = run_error(Arch::Llama, &config, &Plan::of(config, 0));
    assert!(error.contains("at least 1 step"), "{error}");
}

#[test]
fn an_empty_batch_is_an_error() {
    let mut config = Config::tiny(20);
    config.batch = 0;
    let error = Model::new(Arch::Gpt2, &config)
        .err()
        .expect("an error")
        .to_string();
    assert!(error.contains("batch must be at least 1"), "{error}");
    let ids = data(20);
    let error = EvalBatches::new(&ids, &ids, &config)
        .err()
        .expect("an error")
        .to_string();
    assert!(
        error.contains("get_batch") && error.contains("batch 0"),
        "{error}"
    );
}

#[test]
fn a_learning_rate_that_blows_the_loss_up_stops_the_run_at_once() {
    let config = Config::tiny(20);
    for arch in [Arch::Gpt2, Arch::Llama] {
        let mut plan = Plan::of(config, 20);
        plan.settings.lr = 1e30;
        plan.settings.warmup = 0;
        let error = run_error(arch, &config, &plan);
        assert!(
            error.contains("at step") && error.contains("the largest gradient is"),
            "{arch}: {error}"
        );
        assert!(error.contains("smaller learning rate"), "{arch}: {error}");
    }
}

#[test]
fn a_sample_needs_a_prompt() {
    manual_seed(1);
    let model = Model::new(Arch::Llama, &Config::tiny(20)).expect("a model");
    let error = sample(&model, &[], 5, &mut Generator::new(1)).expect_err("an error");
    assert!(error.to_string().contains("prompt"), "{error}");
}

#[test]
fn an_unknown_architecture_or_tokenizer_is_refused_with_the_choices() {
    let binary = env!("CARGO_BIN_EXE_ch22-pretraining");
    for (flag, value, choices) in [
        ("--arch", "bert", "gpt2, llama"),
        ("--tokenizer", "words", "char, bpe"),
    ] {
        let output = Command::new(binary)
            .args(["--train", flag, value])
            .output()
            .expect("the chapter's binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flag} {value} was accepted");
        assert!(
            stderr.contains(&format!("invalid value '{value}'"))
                && stderr.contains(choices),
            "{flag} {value}: {stderr}"
        );
    }
}
