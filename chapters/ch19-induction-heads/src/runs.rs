//! The chapter's two training runs, from one seed: attention-only models trained on repeats
//! of varying length and of one fixed length, their scores logged along the way, and the
//! saved run of the default seed.

use shared::manual_seed;

use crate::checkpoint::{Checkpoint, LogEntry, Parameters, parameters_of};
use crate::data::{Batch, Repeats};
use crate::model::AttentionOnly;
use crate::scores::scores;
use crate::train::train;

/// The chapter's seed, where `--seed S` gives none.
pub const SEED: u64 = 7;

/// The training steps of the run with repeats of varying length.
pub const STEPS: u32 = 3000;
/// The training steps of the fixed-offset run.
pub const FIXED_STEPS: u32 = 300;
/// Sequences in the evaluation batch.
pub const EVAL: usize = 256;
/// The scores are logged every this many steps.
pub const LOG_EVERY: u32 = 100;

/// The saved run of the default seed, written by the chapter's own training.
pub const SAVED_RUN: &[u8] = include_bytes!("../data/trained.ckpt");

/// Both runs, trained from `seed`: the model with repeats of varying length trained
/// [`STEPS`] steps, the fixed-offset one [`FIXED_STEPS`] steps (from `seed + 1`).
pub fn train_runs(seed: u64) -> Checkpoint {
    manual_seed(seed);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    let _shown = Repeats::Variable.draw(1);
    let (losses, log, snapshots) =
        logged_training(&mut model, Repeats::Variable, STEPS, &eval);
    manual_seed(seed.wrapping_add(1));
    let mut fixed = AttentionOnly::new();
    let fixed_eval = Repeats::Fixed.draw(EVAL);
    let (_, fixed_log, _) =
        logged_training(&mut fixed, Repeats::Fixed, FIXED_STEPS, &fixed_eval);
    Checkpoint {
        seed,
        losses,
        log,
        fixed_steps: FIXED_STEPS,
        fixed_log,
        snapshots,
    }
}

/// Trains `steps` steps of `repeats`, logging the scores on `eval` every [`LOG_EVERY`]
/// steps. Returns every step's loss, the log, and the parameters before training and at
/// every logged step.
pub fn logged_training(
    model: &mut AttentionOnly,
    repeats: Repeats,
    steps: u32,
    eval: &Batch,
) -> (Vec<f32>, Vec<LogEntry>, Vec<Parameters>) {
    let mut log = Vec::new();
    let mut snapshots = vec![parameters_of(model)];
    let losses = train(model, repeats, steps, |step, loss, model| {
        if step % LOG_EVERY == 0 {
            let scores = scores(model, eval, None);
            log.push(LogEntry { step, loss, scores });
            snapshots.push(parameters_of(model));
        }
    });
    (losses, log, snapshots)
}
