//! What LoRA saves on SmolLM2-135M against training the same projections in full, for the
//! chapter's default targets and for the committed adapter's recipe (the page shows the
//! snapshot).

use ch23_lora::adapter::LoraConfig;
use ch23_lora::savings::{BYTES_PER_TRAINED, report, smollm2_shape, trained};
use ch23_lora::setup::{RANK, SMOLLM2_LAYERS, TARGETS, TRAIN_TARGETS};
use ch23_lora::targets::Target;

#[test]
fn full_training_of_a_projection_carries_a_gradient_and_two_moments_per_weight() {
    // One 576 × 576 projection in one layer: rank 8 trains 8 · (576 + 576) numbers.
    let t = trained(8, 1, &[smollm2_shape(Target::Query)]);
    assert_eq!(t.lora, 9216);
    assert_eq!(t.full, 331_776);
    assert_eq!(t.full * BYTES_PER_TRAINED, 3_981_312);
    // The feed-forward network's way back is 576 × 1536.
    assert_eq!(smollm2_shape(Target::Down), (576, 1536));
    assert_eq!(trained(RANK, SMOLLM2_LAYERS, &[]).full, 0);
}

#[test]
fn what_lora_saves_on_smollm2() {
    let mut lines = Vec::new();
    for targets in [&TARGETS[..], &TRAIN_TARGETS[..]] {
        let config = LoraConfig::new(RANK, 16.0, targets).unwrap();
        lines.extend(report(RANK, &config.targets));
    }
    insta::assert_snapshot!(lines.join("\n"));
}
