//! The loss to expect before the first step, worked out before running: a check that the
//! model starts as it should, and the number every later loss is measured against.

// ANCHOR: first_loss
/// The cross-entropy you expect from a freshly initialised model over `vocab_size`
/// tokens, before its first step: its weights are small (standard deviation 0.02), so
/// every logit is nearly zero, the softmax nearly uniform, and the loss `−ln(1/V) = ln V`
/// whatever the target: the loss of guessing every token alike.
pub fn first_loss(vocab_size: usize) -> f64 {
    (vocab_size as f64).ln()
}
// ANCHOR_END: first_loss
