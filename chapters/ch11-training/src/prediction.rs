//! Predict before you run: where does the trained attention look?
//!
//! Change the task to "the token `shift` places back" and train again: the answer is
//! somewhere in the past, at a fixed distance, and attention is the only way to fetch it.

/// Where a trained head attends most from `position` when the task is "the token `shift`
/// places back": `Some(p)` for the position it looks at, `None` where the task asks
/// nothing (no token is that far back, and the loss never looks there).
///
/// # Shapes
/// Positions are indices into a sequence of `TOKENS` tokens.
// ANCHOR: predicted_focus
pub fn predicted_focus(shift: usize, position: usize) -> Option<usize> {
    position.checked_sub(shift)
}
// ANCHOR_END: predicted_focus
