//! Cross-entropy: how surprised the model is by the right answer, and its gradient.
//!
//! For one row of logits `z` and its target `t`, the loss is `−log softmax(z)[t]`; the
//! batch's loss is the mean over the rows. Its gradient with respect to the logits is the
//! softmax minus the one-hot target, divided by the number of rows: every wrong token is
//! pushed down by its probability, the right one pulled up by what it lacks.

use shared::Tensor;

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/cross_entropy_backward.rs"
)]
mod backward;
pub use backward::cross_entropy_backward;

/// The loss and what its backward pass needs.
#[derive(Clone, Debug)]
pub struct CrossEntropy {
    /// The mean of `−log p(target)` over the rows.
    pub loss: f32,
    /// `log_softmax(logits, -1)`, kept for the backward pass.
    ///
    /// `[rows, classes]`.
    pub log_probs: Tensor,
}

/// `F.cross_entropy(logits, targets)` with the default mean over the rows: the mean of
/// `−log p(target)`.
///
/// # Shapes
/// `logits`: `[rows, classes]`, `targets`: `[rows]` ids in `0..classes`.
// ANCHOR: cross_entropy
pub fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy {
    let log_probs = logits.log_softmax(-1);
    let classes = log_probs.size(-1);
    let values = log_probs.to_vec();
    let picked = targets
        .to_vec()
        .into_iter()
        .enumerate()
        .map(|(row, t)| values[row * classes + t as usize]);
    let loss = -picked.sum::<f32>() / targets.numel() as f32;
    CrossEntropy { loss, log_probs }
}
// ANCHOR_END: cross_entropy
