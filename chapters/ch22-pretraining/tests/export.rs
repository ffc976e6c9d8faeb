//! A small Llama trained a few steps on made-up text, saved in the Hub's layout, and read
//! back by chapter 20's loader: the same logits as chapter 22's forward pass, to the bit,
//! and the same greedy tokens. No data needed. (transformers reads the same folder in
//! `reference/ch22_export_check.py`; `tests/fixtures/export_check.txt` is what it printed,
//! checked in `tests/export_check.rs`.)

#[path = "common/tiny_export.rs"]
mod tiny_export;

use std::path::{Path, PathBuf};

use ch20_real_model::generate::{Choice, Limits, generate};
use ch20_real_model::loader::load;
use ch22_pretraining::bpe::Bpe;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::export::{HUB_FILES, save_hub};
use ch22_pretraining::model::Model;
use ch22_pretraining::tokenizer_json::to_tokenizer;
use shared::{Tensor, manual_seed};
use tiny_export::{TEXT, trained};

/// A fresh folder under the system's temporary one, removed first if an earlier run left it.
fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ch22-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn ids_tensor(ids: &[u32]) -> Tensor<i64> {
    Tensor::from_vec(ids.iter().map(|&i| i64::from(i)).collect(), &[1, ids.len()])
}

fn save(dir: &Path, steps: u32) -> (Model, Config, Bpe, Vec<u32>) {
    let (model, config, bpe) = trained(3, steps);
    let ids = bpe.encode(TEXT).expect("ids");
    let tokenizer = to_tokenizer(&bpe).expect("a tokenizer");
    let written = save_hub(dir, &model, &config, &tokenizer).expect("saved");
    assert_eq!(written.len(), 3);
    (model, config, bpe, ids)
}

#[test]
fn chapter_20_reads_the_saved_model_and_computes_the_same_logits() {
    let dir = fresh_dir("export-logits");
    let (model, config, bpe, ids) = save(&dir, 5);
    for name in HUB_FILES {
        assert!(dir.join(name).is_file(), "{name} written");
    }
    let loaded = load(&dir, |_, _| {}).expect("chapter 20 loads the folder");
    assert_eq!(loaded.config.vocab_size, config.vocab_size);
    assert_eq!(loaded.config.context_length, config.context);
    assert_eq!((loaded.bos, loaded.eos), (None, None));
    let window = &ids[..config.context];
    let ours = model.forward(&ids_tensor(window)).to_vec();
    let theirs = loaded
        .model
        .forward(&ids_tensor(window), &loaded.recipe)
        .0
        .to_vec();
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "logit {i}: chapter 22 computes {a}, chapter 20 on the saved model {b}"
        );
    }
    // The tokenizer.json reads text as the chapter's own encoder does.
    let sample = "the cat met the dog on a log.";
    let encoded = loaded.tokenizer.encode(sample, false).expect("encoded");
    assert_eq!(encoded.get_ids(), bpe.encode(sample).expect("ids"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chapter_20_generates_the_greedy_tokens_of_chapter_22s_model() {
    let dir = fresh_dir("export-greedy");
    let (model, config, bpe, _) = save(&dir, tiny_export::STEPS);
    let loaded = load(&dir, |_, _| {}).expect("loaded");
    let prompt = bpe.encode("the cat").expect("ids");
    let new = config.context - prompt.len();
    let limits = Limits {
        max_new_tokens: new,
        eos: None,
        context_length: config.context,
    };
    let theirs = generate(
        &loaded.model,
        &loaded.recipe,
        &prompt,
        Choice::Greedy,
        &limits,
        |_| {},
    )
    .expect("generated");
    // Chapter 22's model, greedy, the whole sequence read again at every step.
    let mut ours = prompt.clone();
    for _ in 0..new {
        let logits = model.forward(&ids_tensor(&ours));
        let last = logits.select(0, 0).select(0, -1);
        ours.push(last.argmax().item() as u32);
    }
    assert_eq!(
        theirs,
        ours[prompt.len()..],
        "greedy tokens: chapter 20 (left) and chapter 22"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_save_never_overwrites_files_it_did_not_write() {
    let (model, config, bpe) = trained(3, 1);
    let tokenizer = to_tokenizer(&bpe).expect("a tokenizer");
    // A folder with the reader's notes: refused, the notes untouched, nothing written.
    let dir = fresh_dir("export-foreign");
    std::fs::create_dir_all(&dir).expect("a folder");
    std::fs::write(dir.join("notes.txt"), "mine").expect("written");
    let error = save_hub(&dir, &model, &config, &tokenizer).expect_err("refused");
    assert!(error.to_string().contains("notes.txt"), "{error}");
    assert!(error.to_string().contains("nothing was written"), "{error}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine"
    );
    assert!(!dir.join("config.json").exists());
    // A config.json that is not ours (no model.safetensors of this chapter beside it).
    std::fs::remove_file(dir.join("notes.txt")).expect("removed");
    std::fs::write(dir.join("config.json"), "{}").expect("written");
    let error = save_hub(&dir, &model, &config, &tokenizer).expect_err("refused");
    assert!(error.to_string().contains("config.json"), "{error}");
    assert_eq!(
        std::fs::read_to_string(dir.join("config.json")).expect("kept"),
        "{}"
    );
    // An earlier save of ours is replaced.
    std::fs::remove_file(dir.join("config.json")).expect("removed");
    save_hub(&dir, &model, &config, &tokenizer).expect("a first save");
    save_hub(&dir, &model, &config, &tokenizer)
        .expect("saved again over our own files");
    // The gpt2 model has no Hub layout here.
    manual_seed(1);
    let gpt2 = Model::new(Arch::Gpt2, &config).expect("a model");
    let error = save_hub(&dir, &gpt2, &config, &tokenizer).expect_err("refused");
    assert!(error.to_string().contains("llama"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_config_that_does_not_match_the_weights_is_an_error_naming_the_tensor() {
    let dir = fresh_dir("export-mismatch");
    save(&dir, 1);
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).expect("the config");
    let wider =
        text.replace("\"intermediate_size\": 88", "\"intermediate_size\": 96");
    assert_ne!(wider, text, "the config names the SwiGLU's width");
    std::fs::write(&path, wider).expect("written");
    let error = load(&dir, |_, _| {}).err().expect("refused").to_string();
    assert!(error.contains("mlp.gate_proj.weight"), "{error}");
    assert!(
        error.contains("[88, 32]") && error.contains("[96, 32]"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
