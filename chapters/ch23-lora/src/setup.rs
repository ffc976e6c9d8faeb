//! The chapter's choices: the task's size, the adapter's shape, the training run's.

/// The seed of the held-out draw, the adapters' `A` and the batches (`--seed` replaces it).
pub const SEED: u64 = 23;
/// Operands run over `0..OPERANDS`: sums of two numbers below 100.
pub const OPERANDS: u32 = 100;
/// Sums kept out of training, to measure what the model learned rather than remembered.
pub const HELD_OUT: usize = 200;
/// The adapters' rank `r` (of the tiny checkpoint's run and of the checks against the
/// reference's losses).
pub const RANK: usize = 8;
/// LoRA's `alpha`: the update is scaled by `alpha / r`.
pub const ALPHA: f64 = 16.0;
/// The projections adapted by default: the queries' and the values', as Hu et al. did.
pub const TARGETS: [&str; 2] = ["q_proj", "v_proj"];
/// Questions per training step.
pub const BATCH: usize = 8;
/// `--train`'s recipe, the committed adapter's: a rank of 8 beside all seven projections
/// of every layer (the feed-forward network's too: adding with a carry is more than the
/// attention's queries and values can learn in a few hundred steps), ...
pub const TRAIN_TARGETS: [&str; 7] = [
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
];
/// ... this many steps of `BATCH` questions, ...
pub const TRAIN_STEPS: u32 = 500;
/// ... and AdamW's learning rate at the first step, decaying in a straight line to 0 at
/// the last.
pub const LR: f64 = 2e-3;
/// `--train` measures the held-out accuracy every this many steps.
pub const EVAL_EVERY: u32 = 100;
/// The chapter's short run on the tiny checkpoint, every loss printed.
pub const TINY_STEPS: u32 = 8;
/// The learning rate of that run: the tiny checkpoint's random weights need a large one
/// to move in eight steps.
pub const TINY_LR: f64 = 1e-2;
/// Chapter 20's tiny checkpoint (a Llama of 2 layers, 4 query and 2 key/value heads), in
/// its fixtures folder.
pub const TINY: &str = "chapters/ch20-real-model/fixtures/tiny-llama";
/// Held-out sums answered in the default run.
pub const SHOWN: usize = 10;
/// The trained adapter the chapter ships, relative to the workspace root.
pub const TRAINED: &str = "chapters/ch23-lora/data/adapter";
/// Where `--train` saves without `--save`, relative to the workspace root: a folder git
/// ignores, so that a run never replaces the adapter the chapter ships.
pub const SAVED: &str = "adapters/sums";

/// SmolLM2-135M's layers, ...
pub const SMOLLM2_LAYERS: usize = 30;
/// ... the width of its stream and of its queries, ...
pub const SMOLLM2_D_MODEL: usize = 576;
/// ... of its keys and values (3 key/value heads of 64), ...
pub const SMOLLM2_D_KV: usize = 192;
/// ... and of its feed-forward network.
pub const SMOLLM2_D_FF: usize = 1536;

/// `relative`, a path from the workspace root, found from this crate's folder (so any
/// current folder works).
pub fn in_workspace(relative: &str) -> std::path::PathBuf {
    let chapter = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // chapters/ch23-lora is two folders below the root.
    let root = chapter.ancestors().nth(2).unwrap_or(chapter);
    root.join(relative)
}
