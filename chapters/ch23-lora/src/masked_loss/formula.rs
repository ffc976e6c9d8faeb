//! The masked cross-entropy as its formula, kept in its own file because it is an exercise.

use shared::{Result, Tensor};

use crate::masked_loss::{IGNORE, no_answer};

/// The mean cross-entropy over the rows whose target is not [`IGNORE`].
///
/// # Shapes
/// `logits`: `[rows, classes]`, `targets`: `[rows]`. Returns a number.
// ANCHOR: masked_cross_entropy
pub fn masked_cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> Result<f32> {
    let log_probs = logits.log_softmax(-1);
    let mut total = 0.0;
    let mut counted = 0;
    for (row, target) in targets.to_vec().into_iter().enumerate() {
        if target != IGNORE {
            total -= log_probs.get(row).get(target).item();
            counted += 1;
        }
    }
    if counted == 0 {
        return Err(no_answer(targets.numel()));
    }
    Ok(total / counted as f32)
}
// ANCHOR_END: masked_cross_entropy
