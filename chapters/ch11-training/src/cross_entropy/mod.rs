//! Cross-entropy: how surprised the model is by the right answer, and its gradient.
//!
//! For one row of logits `z` and its target `t`, the loss is `−log softmax(z)[t]`; the
//! batch's loss is the mean over the rows. Its gradient with respect to the logits is the
//! softmax minus the one-hot target, divided by the number of rows: every wrong token is
//! pushed down by its probability, the right one pulled up by what it lacks.

use shared::{Error, Result, Tensor};

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
///
/// # Panics
/// With [`f_cross_entropy`]'s message when the shapes or the targets do not fit.
// ANCHOR: cross_entropy
pub fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy {
    if let Err(error) = check_targets(logits, targets) {
        panic!("{error}");
    }
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

/// [`cross_entropy`], or the error PyTorch raises when the logits are not `[rows, classes]`,
/// the targets are not `[rows]`, or a target is not a class id.
///
/// # Shapes
/// `logits`: `[rows, classes]`, `targets`: `[rows]` ids in `0..classes`.
pub fn f_cross_entropy(
    logits: &Tensor,
    targets: &Tensor<i64>,
) -> Result<CrossEntropy> {
    check_targets(logits, targets)?;
    Ok(cross_entropy(logits, targets))
}

/// Reading `log_probs[row, t]` for a `t` outside `0..classes` would read another row's
/// value (or past the end), so the targets are checked first, with PyTorch's messages.
fn check_targets(logits: &Tensor, targets: &Tensor<i64>) -> Result<()> {
    let op = "cross_entropy";
    if logits.dim() != 2 || targets.dim() != 1 {
        return Err(Error::Shape {
            op,
            detail: format!(
                "expected logits [rows, classes] and targets [rows], got {:?} and {:?}",
                logits.sizes(),
                targets.sizes()
            ),
        });
    }
    if logits.size(0) != targets.size(0) {
        return Err(Error::Shape {
            op,
            detail: format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                logits.size(0),
                targets.size(0)
            ),
        });
    }
    let classes = logits.size(1);
    match targets
        .to_vec()
        .into_iter()
        .find(|&t| !usize::try_from(t).is_ok_and(|t| t < classes))
    {
        Some(t) => Err(Error::InvalidArgument {
            op,
            detail: format!("Target {t} is out of bounds."),
        }),
        None => Ok(()),
    }
}
