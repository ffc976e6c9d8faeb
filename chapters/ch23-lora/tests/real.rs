//! SmolLM2 against PyTorch + PEFT: the first steps of fine-tuning
//! (`tests/fixtures/real_losses.json`, written by `reference/ch23_lora.py --real`), and the
//! committed adapter's greedy answers to held-out sums (`tests/fixtures/real_answers.json`,
//! written by `reference/ch23_lora.py --answers`). These tests need the model file
//! (`bash scripts/get-model.sh`): without it they pass with a message, unless
//! `ATTN_REQUIRE_MODEL=1` (as in CI), which makes a missing file a failure.
//!
//! The losses are compared within rounding, not bit for bit: the model's products of 576
//! and 1536 terms do not add in MKL's order here (chapter 20's real-model tests say the
//! same of its logits). Greedy tokens must be PyTorch's exactly, as chapter 20's are.

use ch11_training::adamw::AdamW;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::loader::{load, model_for_tests};
use ch20_real_model::model::pack_weights;
use ch20_real_model::tokenizer::decode;
use ch23_lora::accuracy::{ANSWER_TOKENS, reply_ids};
use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::examples::Encoder;
use ch23_lora::peft;
use ch23_lora::setup::{ALPHA, HELD_OUT, RANK, SEED, TARGETS, TRAINED, in_workspace};
use ch23_lora::task::split;
use ch23_lora::train::{Schedule, run};
use serde_json::Value;
use sha2::{Digest, Sha256};
use shared::manual_seed;

/// The command that writes `tests/fixtures/real_answers.json` again.
const REGENERATE_ANSWERS: &str = "python reference/ch23_lora.py --answers \
     models/SmolLM2-135M-Instruct.Q4_1.gguf";

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("a list of ids")
        .iter()
        .map(|x| x.as_u64().expect("an id") as u32)
        .collect()
}

#[test]
fn the_committed_adapters_greedy_answers_are_pytorch_and_pefts() {
    let fixture = in_workspace("chapters/ch23-lora/tests/fixtures/real_answers.json");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    // The fixture must be the answers of the adapter committed now.
    let dir = in_workspace(TRAINED);
    for (name, made_with) in expected["adapter_sha256"].as_object().unwrap() {
        let made_with = made_with.as_str().unwrap();
        let file = dir.join(name);
        let bytes = std::fs::read(&file).unwrap();
        let now: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            now,
            made_with,
            "{} has changed since tests/fixtures/real_answers.json was made from it \
             (sha256 {now}, the fixture's {made_with}): regenerate the fixture with\n  {}",
            file.display(),
            REGENERATE_ANSWERS
        );
    }
    let Some(path) = model_for_tests() else {
        return;
    };
    assert_eq!(
        expected["max_new_tokens"].as_u64(),
        Some(ANSWER_TOKENS as u64)
    );
    let mut loaded = load(&path, |_, _| {}).expect("the model loads");
    let encoder = Encoder::new(&loaded).unwrap();
    assert_eq!(expected["eos"].as_u64(), Some(u64::from(encoder.eos)));
    manual_seed(expected["seed"].as_u64().unwrap());
    let sums = split(HELD_OUT).unwrap();
    let theirs = expected["answers"].as_array().unwrap();
    let asked = &sums.held_out[..theirs.len()];
    let adapter = peft::load(&dir, &loaded.model).unwrap();
    adapter.merge_into(&mut loaded.model);
    let (model, recipe) = (&loaded.model, &loaded.recipe);
    let context = loaded.config.context_length;
    // As `answer_all` does: the weights packed once for all the prompts.
    let _packed = pack_weights(model);
    for (sum, want) in asked.iter().zip(theirs) {
        let question = sum.question();
        assert_eq!(question, want["question"].as_str().unwrap());
        let prompt = encoder.prompt_ids(sum).unwrap();
        assert_eq!(prompt, ids(&want["prompt_ids"]), "prompt ids of {question}");
        let mut ours = reply_ids(model, recipe, &encoder, context, sum).unwrap();
        assert_eq!(ours, ids(&want["greedy"]), "greedy tokens after {question}");
        // The text the chapter's accuracy reads (`answer_all`): the reply without its end.
        if ours.last() == Some(&encoder.eos) {
            ours.pop();
        }
        let reply = decode(&encoder.tokenizer, &ours).unwrap();
        assert_eq!(
            reply,
            want["reply"].as_str().unwrap(),
            "the reply to {question}"
        );
    }
}

#[test]
fn the_first_steps_on_smollm2_have_pytorch_and_pefts_losses() {
    let Some(path) = model_for_tests() else {
        return;
    };
    let fixture = in_workspace("chapters/ch23-lora/tests/fixtures/real_losses.json");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let steps = expected["steps"].as_u64().unwrap() as u32;
    let batch = expected["batch"].as_u64().unwrap() as usize;
    let lr = expected["lr"].as_f64().unwrap();
    let theirs: Vec<f64> = expected["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let loaded = load(&path, |_, _| {}).expect("the model loads");
    let encoder = Encoder::new(&loaded).unwrap();
    manual_seed(SEED);
    let sums = split(HELD_OUT).unwrap();
    let config = LoraConfig::new(RANK, ALPHA, &TARGETS).unwrap();
    let mut adapter = Adapter::new(&loaded.model, &config).unwrap();
    let ours = run::<PytorchOrder>(
        &loaded.model,
        &loaded.recipe,
        &mut adapter,
        &encoder,
        &sums.train,
        &mut AdamW::new(lr),
        (steps, batch, Schedule::Constant(lr)),
        |_, _| {},
    )
    .unwrap();
    for (step, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        let gap = (f64::from(*o) - t).abs();
        assert!(
            gap <= 1e-4 * t.abs(),
            "step {}: loss {o} vs PyTorch + PEFT's {t} (apart by {gap:e})",
            step + 1
        );
    }
}
