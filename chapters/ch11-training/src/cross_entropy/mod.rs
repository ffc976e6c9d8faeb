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

/// `F.cross_entropy(logits, targets)` with the default mean over the rows.
///
/// The sum of `−log p` is added in PyTorch's order (the `nll_loss` kernel adds into eight
/// partial sums, each carried into the next after every 16 terms; see [`nll_sum`]), then
/// divided by the number of rows, so the loss has PyTorch's exact bits.
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
    let loss = nll_sum(picked) / targets.numel() as f32;
    CrossEntropy { loss, log_probs }
}
// ANCHOR_END: cross_entropy

/// `−Σ log p` in the order of PyTorch's `nll_loss`: eight partial sums, the first taking
/// every term; whenever the count of terms seen so far (before this one) is a multiple of
/// 16, 256, ..., the lower sums are carried into the next one up. The partial sums are added
/// last, lowest first. (So for 16 rows or fewer the first row's term is added last.)
/// This is the same idea as a pairwise sum: the error grows with the log of the count.
///
/// # Shapes
/// Any number of log-probabilities in, one float out.
pub fn nll_sum(log_probs: impl IntoIterator<Item = f32>) -> f32 {
    let mut partial = [0.0f32; 8];
    for (i, log_p) in log_probs.into_iter().enumerate() {
        partial[0] -= log_p;
        for level in 0..7 {
            if i & (15 << (4 * level)) != 0 {
                break;
            }
            partial[level + 1] += partial[level];
            partial[level] = 0.0;
        }
    }
    partial.iter().fold(0.0, |sum, &p| sum + p)
}
