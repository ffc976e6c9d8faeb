//! The tiny checkpoints the reference script built with transformers: our loader, our
//! tokenizer and chapter 15's model give transformers' logits and tokens, bit for bit.
//!
//! Every product of these models has at most 256 terms and 2^18 multiply-adds, so ours add
//! in MKL's order. The fixtures were made on the processor their `made_on` names, with MKL's
//! reproducible mode (`MKL_CBWR=AUTO`), which adds as on the Intel reference; each test
//! follows the build of PyTorch's kernels the fixture records (an AMD processor runs the
//! AVX2 build: a softmax row in 8 lanes, not 16).

mod common;

use ch15_modern_layer::TinyModel;
use ch15_modern_layer::model::generate_cached;
use ch20_real_model::generate::{Choice, Limits, as_batch, generate};
use ch20_real_model::gguf::GgufFile;
use ch20_real_model::loader::load;
use ch20_real_model::weights::Weights;
use ch20_real_model::{chat, config::Config, tokenizer};
use common::{Expected, assert_bits, assert_within_rounding, fixture};

fn check_checkpoint(name: &str) {
    let loaded = load(&fixture(name), |_, _| {}).expect("the tiny checkpoint loads");
    let expected = Expected::open(&format!("{name}/expected.safetensors"));
    expected.follow_capability();
    let ids: Vec<u32> = expected.i64("ids").iter().map(|&i| i as u32).collect();
    let (logits, _) = loaded.model.forward(&as_batch(&ids), &loaded.recipe);
    assert_bits(&logits, &expected.f32("logits"), name);
    // Decoding: the one-row products of every step, against transformers' cached generate.
    let cached = generate_cached(
        &loaded.model,
        &as_batch(&ids),
        8,
        &loaded.recipe,
        TinyModel::forward,
    );
    // transformers multiplies one row at every step (its prefill too: it keeps only the last
    // row's logits), and MKL's one-row order on the AMD processor the fixture was made on is
    // not the Intel one our one-row products follow: within the rounding of 192 products.
    let theirs = expected.f32("greedy_logits").select(0, 0);
    assert_within_rounding(
        &cached.logits,
        &theirs,
        192,
        &format!("{name}, decoding"),
    );
    let limits = Limits {
        max_new_tokens: 8,
        eos: None,
        context_length: loaded.config.context_length,
    };
    let new = generate(
        &loaded.model,
        &loaded.recipe,
        &ids,
        Choice::Greedy,
        &limits,
        |_| {},
    )
    .unwrap();
    let want: Vec<u32> = expected.i64("greedy").iter().map(|&i| i as u32).collect();
    assert_eq!(new, want, "{name}: greedy tokens");
}

#[test]
fn tiny_llama_gives_transformers_logits_and_tokens() {
    check_checkpoint("tiny-llama");
}

#[test]
fn tiny_qwen3_gives_transformers_logits_and_tokens() {
    check_checkpoint("tiny-qwen3");
}

#[test]
fn the_tokenizer_json_gives_the_prompts_ids() {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("tiny.json")).unwrap())
            .unwrap();
    let tok = tokenizer::from_file(&fixture("tiny-llama/tokenizer.json")).unwrap();
    let ids = tokenizer::encode(&tok, summary["prompt"].as_str().unwrap()).unwrap();
    let want: Vec<u32> = summary["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(&ids[..want.len()], &want[..]);
}

#[test]
fn the_gguf_reader_dequantises_and_unpermutes_as_transformers() {
    let file = GgufFile::open(&fixture("tiny-llama.gguf")).unwrap();
    let config = Config::from_gguf(&file).unwrap();
    let mut weights = Weights::from_gguf(&file, &config, |_, _| {}).unwrap();
    let expected = Expected::open("tiny-llama.gguf.expected.safetensors");
    for name in expected.names().iter().filter(|n| *n != "logits") {
        let theirs = expected.f32(name);
        let ours = weights.take(name, theirs.sizes()).unwrap();
        let (max, differ) = common::distance(&ours, &theirs);
        assert_eq!(
            differ, 0,
            "{name}: {differ} values differ from transformers', by up to {max:e}"
        );
    }
    assert!(
        weights.remaining().is_empty(),
        "left over: {:?}",
        weights.remaining()
    );
}

#[test]
fn the_tiny_gguf_gives_transformers_logits() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let expected = Expected::open("tiny-llama.gguf.expected.safetensors");
    expected.follow_capability();
    let ids: Vec<u32> = Expected::open("tiny-llama/expected.safetensors")
        .i64("ids")
        .iter()
        .map(|&i| i as u32)
        .collect();
    let (logits, _) = loaded.model.forward(&as_batch(&ids), &loaded.recipe);
    assert_bits(&logits, &expected.f32("logits"), "tiny GGUF");
}

#[test]
fn the_gguf_tokenizer_gives_transformers_ids_on_hard_strings() {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("tiny.json")).unwrap())
            .unwrap();
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    for (text, ids) in summary["gguf_tokens"].as_object().unwrap() {
        let want: Vec<u32> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let ours = tokenizer::encode(&loaded.tokenizer, text).unwrap();
        assert_eq!(ours, want, "{text:?}");
        assert_eq!(
            tokenizer::decode(&loaded.tokenizer, &ours).unwrap(),
            *text,
            "decoding {text:?}"
        );
    }
    let template = loaded.chat_template.as_deref().expect("a chat template");
    let rendered = chat::render(
        template,
        &chat::conversation("Hi", None),
        "<|endoftext|>",
        "<|im_end|>",
    )
    .unwrap();
    assert_eq!(rendered, summary["gguf_chat"].as_str().unwrap());
}

/// A checkpoint folder finds its chat template where transformers writes it: in
/// `chat_template.jinja` (its own file, as transformers saves it since 2025), else in
/// `tokenizer_config.json` (older checkpoints); the file wins where both are.
#[test]
fn a_folder_reads_its_chat_template_from_either_place() {
    let copy = |name: &str| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["config.json", "model.safetensors", "tokenizer.json"] {
            std::fs::copy(fixture(&format!("tiny-llama/{file}")), dir.join(file))
                .unwrap();
        }
        dir
    };
    let (old, new) = ("{{ 'in the config' }}", "{{ 'in its own file' }}");
    let config = serde_json::json!({ "chat_template": old }).to_string();

    let dir = copy("chat-template-in-config");
    std::fs::write(dir.join("tokenizer_config.json"), &config).unwrap();
    assert_eq!(
        load(&dir, |_, _| {}).unwrap().chat_template.as_deref(),
        Some(old)
    );

    let dir = copy("chat-template-in-both");
    std::fs::write(dir.join("tokenizer_config.json"), &config).unwrap();
    std::fs::write(dir.join("chat_template.jinja"), new).unwrap();
    assert_eq!(
        load(&dir, |_, _| {}).unwrap().chat_template.as_deref(),
        Some(new)
    );

    let dir = copy("chat-template-nowhere");
    assert_eq!(load(&dir, |_, _| {}).unwrap().chat_template, None);
}
