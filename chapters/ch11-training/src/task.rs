//! The task: at every position from `shift` on, output the token `shift` places back.
//!
//! A token alone says nothing about its target: the answer sits in another position, so
//! the model must look back, and the only part of it that can is attention. The solution is
//! a pattern you can see: position `i` attends to position `i − shift`, a line parallel to
//! the diagonal of the attention weights.

use shared::{Tensor, randint};

// ANCHOR: task
/// How many token ids there are, `0..VOCAB`.
pub const VOCAB: usize = 8;
/// Tokens per sequence (the context length of the attention).
pub const TOKENS: usize = 8;

/// "Output the token `shift` places back."
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// How far back the answer is: 2 in the chapter.
    pub shift: usize,
}
// ANCHOR_END: task

impl Task {
    /// The chapter's task: the token two places back.
    pub const TWO_BACK: Task = Task { shift: 2 };

    /// A batch of random sequences, drawn from the default generator exactly as
    /// `torch.randint(0, VOCAB, (batch, TOKENS))` draws them.
    ///
    /// # Shapes
    /// Returns `[batch, TOKENS]` ids in `0..VOCAB`.
    pub fn draw_batch(&self, batch: usize) -> Tensor<i64> {
        randint(0, VOCAB, &[batch, TOKENS])
    }

    /// What the model should output at positions `shift..TOKENS`, all sequences flattened
    /// in order: `ids[:, :-shift].reshape(-1)`.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch · (tokens − shift)]`.
    pub fn targets(&self, ids: &Tensor<i64>) -> Tensor<i64> {
        let kept = ids.size(1) - self.shift;
        ids.slice(1, ..kept).reshape(&[-1])
    }

    /// The logits of the positions that have a target, one row each, in the order of
    /// [`Task::targets`]: `logits[:, shift:].flatten(0, 1)`.
    ///
    /// # Shapes
    /// `logits`: `[batch, tokens, vocab]`. Returns `[batch · (tokens − shift), vocab]`.
    pub fn scored_logits(&self, logits: &Tensor) -> Tensor {
        logits.slice(1, self.shift..).flatten(0, 1)
    }

    /// The backward of [`Task::scored_logits`]: the rows go back to their positions, and
    /// the first `shift` positions, which the loss never sees, get a zero gradient.
    ///
    /// # Shapes
    /// `grad`: `[batch · (tokens − shift), vocab]`. Returns `[batch, tokens, vocab]`.
    pub fn scored_logits_backward(
        &self,
        grad: &Tensor,
        batch: usize,
        tokens: usize,
    ) -> Tensor {
        let vocab = grad.size(-1);
        let scored = grad.view([batch, tokens - self.shift, vocab]);
        let unscored = shared::zeros(&[batch, self.shift, vocab]);
        shared::cat(&[&unscored, &scored], 1)
    }

    /// How many of the scored positions the model gets right (the largest logit is the
    /// target).
    ///
    /// # Shapes
    /// `logits`: `[batch, tokens, vocab]`, `ids`: `[batch, tokens]`. Returns
    /// `(correct, batch · (tokens − shift))`.
    pub fn count_correct(
        &self,
        logits: &Tensor,
        ids: &Tensor<i64>,
    ) -> (usize, usize) {
        let predicted = self.scored_logits(logits).argmax_dim(-1, false).to_vec();
        let wanted = self.targets(ids).to_vec();
        let correct = predicted
            .iter()
            .zip(&wanted)
            .filter(|(p, w)| p == w)
            .count();
        (correct, wanted.len())
    }
}
