//! Exercise: predict where a trained attention head looks. Replace the body with your
//! prediction; test with `cargo test -p ch11-training --features exercise predicted_focus`
//! (the test trains models on your tasks and compares).

/// Where a trained head attends most from `position` when the task is "the token `shift`
/// places back": `Some(p)` for the position it looks at, `None` where the task asks
/// nothing.
///
/// # Shapes
/// Positions are indices into a sequence of `TOKENS` tokens.
pub fn predicted_focus(shift: usize, position: usize) -> Option<usize> {
    // TODO: your prediction. This guess says every position looks at itself.
    let _ = shift;
    Some(position)
}
