//! The first steps of fine-tuning SmolLM2 against PyTorch + PEFT's
//! (`tests/fixtures/real_losses.json`, written by `reference/ch23_lora.py --real`). This
//! test needs the model file (`bash scripts/get-model.sh`): without it it passes with a
//! message, unless `ATTN_REQUIRE_MODEL=1` (as in CI), which makes a missing file a failure.
//!
//! The losses are compared within rounding, not bit for bit: the model's products of 576
//! and 1536 terms do not add in MKL's order here (chapter 20's real-model tests say the
//! same of its logits).

use ch11_training::adamw::AdamW;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::loader::{default_model_path, how_to_get_it, load};
use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::examples::Encoder;
use ch23_lora::setup::{ALPHA, HELD_OUT, RANK, SEED, TARGETS, in_workspace};
use ch23_lora::task::split;
use ch23_lora::train::{Schedule, run};
use shared::manual_seed;

#[test]
fn the_first_steps_on_smollm2_have_pytorch_and_pefts_losses() {
    let path = default_model_path();
    if !path.exists() {
        if std::env::var("ATTN_REQUIRE_MODEL").is_ok_and(|v| v == "1") {
            panic!("ATTN_REQUIRE_MODEL=1: {}", how_to_get_it(&path));
        }
        eprintln!("skipped: {}", how_to_get_it(&path));
        return;
    }
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
