//! One run of the chapter: the model trained on the task from one seed, and everything the
//! chapter shows of it (the book's figures and widgets draw the same run).

use shared::{Tensor, manual_seed};

use crate::model::AttentionModel;
use crate::task::Task;
use crate::train::{BATCH, train};

/// The training steps of the default run.
pub const DEFAULT_STEPS: u32 = 60;

/// Everything the chapter shows of one training run (the book's figures draw it too).
pub struct TrainingRun {
    /// The sequence whose attention is shown, `[1, TOKENS]`.
    pub shown: Tensor<i64>,
    /// Its attention weights before training, `[1, HEADS, TOKENS, TOKENS]`.
    pub before: Tensor,
    /// The loss of every step.
    pub losses: Vec<f32>,
    /// Right answers on a fresh batch after training, and how many were asked.
    pub correct: (usize, usize),
    /// The shown sequence's attention weights after training.
    pub after: Tensor,
    /// The trained model.
    pub model: AttentionModel,
}

/// Trains the chapter's model for `steps` steps after `manual_seed(seed)`, drawing in the
/// reference script's order: the parameters, the shown sequence, one batch per step, the
/// batch the accuracy is measured on.
pub fn training_run(
    seed: u64,
    steps: u32,
    on_step: impl FnMut(u32, f32),
) -> TrainingRun {
    let task = Task::TWO_BACK;
    // ANCHOR: setup
    manual_seed(seed);
    let mut model = AttentionModel::new();
    let shown = task.draw_batch(1);
    let before = model.attention_weights(&shown);
    // ANCHOR_END: setup
    // ANCHOR: training
    let losses = train(&mut model, task, steps, on_step);
    let ids = task.draw_batch(BATCH);
    let correct = task.count_correct(&model.forward(&ids), &ids);
    // ANCHOR_END: training
    let after = model.attention_weights(&shown);
    TrainingRun {
        shown,
        before,
        losses,
        correct,
        after,
        model,
    }
}
