//! The committed run: the trained weights read into the Llama model, the log of
//! evaluations parses, and the characters the chapter keeps are the text's.

mod common;

use ch22_pretraining::chars::Chars;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::data::Shakespeare;
use ch22_pretraining::model::Model;
use ch22_pretraining::runs::parse_log;
use ch22_pretraining::setup::{CHARACTERS, LOSS_LOG, TRAINED_LLAMA, TRAINED_STEPS};
use ch22_pretraining::weights::{load_safetensors, to_safetensors};

#[test]
fn the_trained_weights_read_back_as_written() {
    let config = Config::baby(CHARACTERS.chars().count());
    let mut model = Model::new(Arch::Llama, &config).expect("a model");
    load_safetensors(&mut model, TRAINED_LLAMA).expect("the trained weights");
    assert_eq!(to_safetensors(&model).expect("bytes"), TRAINED_LLAMA);
}

#[test]
fn weights_of_another_shape_are_an_error() {
    let mut model = Model::new(Arch::Llama, &Config::tiny(84)).expect("a model");
    let error = load_safetensors(&mut model, TRAINED_LLAMA).expect_err("an error");
    assert!(
        error
            .to_string()
            .contains("wte.weight: expected float32 of shape [84, 32]"),
        "{error}"
    );
    let error = load_safetensors(&mut model, b"not weights").expect_err("an error");
    assert!(
        error.to_string().contains("not a safetensors file"),
        "{error}"
    );
}

#[test]
fn the_log_holds_the_trained_run_and_pytorchs() {
    let rows = parse_log(LOSS_LOG).expect("the log");
    for (source, arch) in [("ours", "llama"), ("pytorch", "gpt2")] {
        let last = rows
            .iter()
            .filter(|r| {
                r.source == source && r.arch == arch && r.steps == TRAINED_STEPS
            })
            .map(|r| r.evaluation)
            .next_back()
            .unwrap_or_else(|| panic!("no run of {source} {arch}"));
        assert_eq!(last.step, TRAINED_STEPS, "{source} {arch}");
        assert!(last.val < 3.0, "{source} {arch}: {last:?}");
    }
}

#[test]
fn the_kept_characters_are_the_texts() {
    if !common::data_is_here() {
        return;
    }
    let data = Shakespeare::load().expect("the text");
    let chars: String = Chars::new(&data.text).chars.iter().collect();
    assert_eq!(chars, CHARACTERS);
}
