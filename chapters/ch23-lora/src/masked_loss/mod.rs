//! The loss on the answer alone: cross-entropy with an ignore index, as PyTorch's
//! `cross_entropy(..., ignore_index=-100)` and TRL's completion-only training compute it.
//!
//! Every position predicts the next token, but the prompt is not ours to learn: the model
//! should answer questions, not write them. A label of [`IGNORE`] takes a position out of
//! the loss, out of the mean's count, and out of the gradient (its row is zero).

use ch19_induction_heads::arithmetic::Arithmetic;
use shared::{Result, Tensor};

#[cfg_attr(feature = "exercise", path = "../../exercises/masked_cross_entropy.rs")]
mod formula;

pub use formula::masked_cross_entropy;

/// The label of a position that does not count: PyTorch's default `ignore_index`.
pub const IGNORE: i64 = -100;

/// The rows that count, their indices in order.
///
/// # Shapes
/// `targets`: `[rows]`. Returns `[counted]`.
pub fn counted_rows(targets: &Tensor<i64>) -> Vec<usize> {
    let targets = targets.to_vec();
    (0..targets.len())
        .filter(|&r| targets[r] != IGNORE)
        .collect()
}

/// The loss of a batch on its answers, with the arithmetic `A`, and its gradient with
/// respect to the logits: position `t` predicts label `t + 1`, the last position predicts
/// nothing, and the rows labelled [`IGNORE`] get a zero gradient.
///
/// # Shapes
/// `logits`: `[batch, tokens, vocab]`, `labels`: `[batch, tokens]`. Returns the loss and a
/// gradient of `[batch, tokens, vocab]`.
// ANCHOR: answer_loss
pub fn answer_loss<A: Arithmetic>(
    logits: &Tensor,
    labels: &Tensor<i64>,
) -> Result<(f32, Tensor)> {
    let [batch, tokens, vocab] = logits.dims();
    let predictions = logits.narrow(1, 0, tokens - 1).flatten(0, 1);
    let targets = labels.narrow(1, 1, tokens - 1).reshape(&[-1]);
    let rows = counted_rows(&targets);
    if rows.is_empty() {
        return Err(no_answer(targets.numel()));
    }
    let index = Tensor::from(rows.clone());
    let kept_targets = targets.index_select(0, &index);
    let ce = A::cross_entropy(&predictions.index_select(0, &index), &kept_targets);
    let kept_grad = A::cross_entropy_backward(&ce.log_probs, &kept_targets).to_vec();
    // Each counted row's gradient back in its place; every other row (the prompt, the
    // padding, the last position) stays zero.
    let mut grad = vec![0.0f32; batch * tokens * vocab];
    for (k, &row) in rows.iter().enumerate() {
        let (b, t) = (row / (tokens - 1), row % (tokens - 1));
        let at = (b * tokens + t) * vocab;
        grad[at..at + vocab].copy_from_slice(&kept_grad[k * vocab..(k + 1) * vocab]);
    }
    Ok((ce.loss, Tensor::from_vec(grad, &[batch, tokens, vocab])))
}
// ANCHOR_END: answer_loss

/// The error of a batch with nothing to learn.
pub(crate) fn no_answer(rows: usize) -> shared::Error {
    shared::Error::InvalidArgument {
        op: "answer_loss",
        detail: format!(
            "all {rows} labels are the ignore index {IGNORE}: no answer to learn"
        ),
    }
}
