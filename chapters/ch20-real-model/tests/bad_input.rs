//! Bad input: a missing, truncated or corrupted file, an unknown architecture or type, a
//! prompt the model cannot take. Each is an error that names the file or the limit, never a
//! panic; property tests feed the reader truncated copies of the tiny GGUF (each reported
//! as truncated) and bit-flipped ones. The command line's own cases are in
//! `tests/command_line.rs`.

mod common;

use std::path::Path;

use ch20_real_model::LoadError;
use ch20_real_model::config::Config;
use ch20_real_model::generate::{Choice, Limits, generate};
use ch20_real_model::gguf::GgufFile;
use ch20_real_model::loader::load;
use ch20_real_model::weights::Weights;
use common::fixture;
use course::quiet_proptest::quiet;
use proptest::prelude::*;

fn tiny_gguf() -> Vec<u8> {
    std::fs::read(fixture("tiny-llama.gguf")).unwrap()
}

/// Everything the loader does with a file held in memory: parse, read the configuration,
/// dequantise every tensor.
fn read_all(bytes: Vec<u8>) -> Result<(), LoadError> {
    let file = GgufFile::parse(bytes, Path::new("copy.gguf"))?;
    let config = Config::from_gguf(&file)?;
    Weights::from_gguf(&file, &config, |_, _| {})?;
    Ok(())
}

#[test]
fn a_missing_file_is_named() {
    let message = load(Path::new("/nowhere/model.gguf"), |_, _| {})
        .err()
        .unwrap()
        .to_string();
    assert!(message.starts_with("/nowhere/model.gguf: "), "{message}");
}

#[test]
fn a_file_that_is_not_gguf_says_so() {
    let message = read_all(b"PK\x03\x04 a zip, not a model".to_vec())
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "copy.gguf: not a GGUF file (it does not start with the bytes GGUF)"
    );
}

#[test]
fn a_truncated_file_names_what_is_missing() {
    let bytes = tiny_gguf();
    let message = read_all(bytes[..bytes.len() - 100].to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("copy.gguf: truncated: the data of tensor "),
        "{message}"
    );
    let message = read_all(bytes[..10].to_vec()).unwrap_err().to_string();
    assert_eq!(
        message,
        "copy.gguf: truncated: the tensor count needs 8 bytes at offset 8, but the file has 10"
    );
    // A count the rest of the file is too short for: the bytes it needs, not "corrupted".
    let message = read_all(bytes[..40].to_vec()).unwrap_err().to_string();
    assert_eq!(
        message,
        "copy.gguf: truncated: the tensor count (20 entries of at least 32 bytes) needs 640 bytes at offset 16, but the file has 40"
    );
}

#[test]
fn an_unknown_tensor_type_is_refused_by_name() {
    let mut bytes = tiny_gguf();
    let file = GgufFile::parse(bytes.clone(), Path::new("copy.gguf")).unwrap();
    // The type code of the first tensor sits 12 bytes before the data offset's end... find it:
    // the name, then n_dims (4), the dims (8 each), then the type (4).
    let info = &file.tensors[0];
    let name_at = bytes
        .windows(info.name.len())
        .position(|w| w == info.name.as_bytes())
        .unwrap();
    let type_at = name_at + info.name.len() + 4 + 8 * info.shape.len();
    bytes[type_at..type_at + 4].copy_from_slice(&12u32.to_le_bytes()); // Q4_K
    let message = read_all(bytes).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "copy.gguf: unsupported type of tensor {}: ggml type 12 (Q4_K)",
            info.name
        )
    );
}

#[test]
fn an_unknown_architecture_is_refused_by_name() {
    let mut bytes = tiny_gguf();
    let at = bytes.windows(5).position(|w| w == b"llama").unwrap();
    bytes[at..at + 5].copy_from_slice(b"gemma");
    let message = read_all(bytes).unwrap_err().to_string();
    assert!(
        message.starts_with("copy.gguf: unsupported general.architecture: \"gemma\""),
        "{message}"
    );
}

#[test]
fn prompts_the_model_cannot_take_are_errors() {
    let loaded = load(&fixture("tiny-llama"), |_, _| {}).unwrap();
    let limits = Limits {
        max_new_tokens: 8,
        eos: None,
        context_length: loaded.config.context_length,
    };
    let run = |prompt: &[u32]| {
        generate(
            &loaded.model,
            &loaded.recipe,
            prompt,
            Choice::Greedy,
            &limits,
            |_| {},
        )
    };
    assert_eq!(
        run(&[]).unwrap_err().to_string(),
        "prompt: the prompt is empty: give the model at least one token"
    );
    assert_eq!(
        run(&[1; 125]).unwrap_err().to_string(),
        "prompt: 125 prompt tokens + 8 new tokens = 133 is longer than the model's context of 128 tokens"
    );
    assert_eq!(
        run(&[320]).unwrap_err().to_string(),
        "prompt: token id 320 is outside the vocabulary of 320"
    );
}

#[test]
fn an_unsupported_configuration_names_its_field() {
    let text = std::fs::read_to_string(fixture("tiny-qwen3/config.json")).unwrap();
    let gelu = text.replace("\"silu\"", "\"gelu\"");
    let message = Config::from_json(&gelu, Path::new("config.json"))
        .unwrap_err()
        .to_string();
    assert_eq!(message, "config.json: unsupported hidden_act: \"gelu\"");
    let other = text.replace("\"qwen3\"", "\"gemma3\"");
    let message = Config::from_json(&other, Path::new("config.json"))
        .unwrap_err()
        .to_string();
    assert_eq!(message, "config.json: unsupported model_type: \"gemma3\"");
}

proptest! {
    #![proptest_config(quiet(96))]
    #[test]
    fn truncated_copies_are_reported_as_truncated(keep in 0usize..119_488) {
        let bytes = tiny_gguf();
        let keep = keep.min(bytes.len() - 1);
        let message = read_all(bytes[..keep].to_vec()).unwrap_err().to_string();
        prop_assert!(message.starts_with("copy.gguf: truncated: "), "cut at {keep} of {} bytes: {message}", bytes.len());
    }

    #[test]
    fn bit_flipped_copies_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..8)) {
        let mut bytes = tiny_gguf();
        for (at, bit) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        let _ = read_all(bytes); // an error or a (changed) model: either is fine, a panic is not
    }
}
