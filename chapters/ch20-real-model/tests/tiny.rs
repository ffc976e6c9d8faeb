//! The tiny checkpoints the reference script built with transformers: our loader, our
//! tokenizer and chapter 15's model give transformers' logits and tokens.

mod common;

use ch14_generation::Products;
use ch20_real_model::generate::{Choice, Limits, as_batch, generate};
use ch20_real_model::gguf::GgufFile;
use ch20_real_model::loader::load;
use ch20_real_model::weights::Weights;
use ch20_real_model::{chat, config::Config, tokenizer};
use common::{Expected, assert_logits, fixture};

/// The longest product of the tiny models: the feed-forward network's 192.
const K: usize = 192;

fn check_checkpoint(name: &str) {
    let loaded = load(&fixture(name), |_, _| {}).expect("the tiny checkpoint loads");
    let expected = Expected::open(&format!("{name}/expected.safetensors"));
    let ids: Vec<u32> = expected.i64("ids").iter().map(|&i| i as u32).collect();
    let (logits, _) = loaded.model.forward(&as_batch(&ids), &loaded.recipe, Products::Batched);
    assert_logits(&logits, &expected.f32("logits"), &expected.made_on(), K, name);
    let limits = Limits { max_new_tokens: 8, eos: None, context_length: loaded.config.context_length };
    let new = generate(&loaded.model, &loaded.recipe, &ids, Choice::Greedy, &limits, |_| {}).unwrap();
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
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture("tiny.json")).unwrap()).unwrap();
    let tok = tokenizer::from_file(&fixture("tiny-llama/tokenizer.json")).unwrap();
    let ids = tokenizer::encode(&tok, summary["prompt"].as_str().unwrap()).unwrap();
    let want: Vec<u32> = summary["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
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
        assert_eq!(differ, 0, "{name}: {differ} values differ from transformers', by up to {max:e}");
    }
    assert!(weights.remaining().is_empty(), "left over: {:?}", weights.remaining());
}

#[test]
fn the_tiny_gguf_gives_transformers_logits() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let expected = Expected::open("tiny-llama.gguf.expected.safetensors");
    let ids: Vec<u32> = Expected::open("tiny-llama/expected.safetensors").i64("ids").iter().map(|&i| i as u32).collect();
    let (logits, _) = loaded.model.forward(&as_batch(&ids), &loaded.recipe, Products::Batched);
    assert_logits(&logits, &expected.f32("logits"), &expected.made_on(), K, "tiny GGUF");
}

#[test]
fn the_gguf_tokenizer_gives_transformers_ids_on_hard_strings() {
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture("tiny.json")).unwrap()).unwrap();
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    for (text, ids) in summary["gguf_tokens"].as_object().unwrap() {
        let want: Vec<u32> = ids.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        let ours = tokenizer::encode(&loaded.tokenizer, text).unwrap();
        assert_eq!(ours, want, "{text:?}");
        assert_eq!(tokenizer::decode(&loaded.tokenizer, &ours).unwrap(), *text, "decoding {text:?}");
    }
    let template = loaded.chat_template.as_deref().expect("a chat template");
    let rendered = chat::render(template, &chat::conversation("Hi", None), "<|endoftext|>", "<|im_end|>").unwrap();
    assert_eq!(rendered, summary["gguf_chat"].as_str().unwrap());
}
