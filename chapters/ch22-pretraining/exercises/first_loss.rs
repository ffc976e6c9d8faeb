//! The loss before training: your code (see `exercises/hints.md`).

/// The cross-entropy you expect from a freshly initialised model over `vocab_size`
/// tokens, before its first step.
pub fn first_loss(vocab_size: usize) -> f64 {
    // TODO: what does a model whose logits are all nearly zero predict for the next
    // token, and what is the loss of that prediction, whatever the target?
    let _ = vocab_size;
    todo!("first_loss")
}
