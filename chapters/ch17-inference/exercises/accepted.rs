//! How many drafted tokens one verification pass keeps under greedy decoding.

/// The length of the longest prefix of `drafted` that agrees with the target's own greedy
/// choices: `target[i]` is the token the target picks after the prompt and `drafted[..i]`.
/// The first disagreement ends it: every later draft token followed a token the target
/// would not have written.
///
/// # Shapes
/// `target` holds at least as many tokens as `drafted`.
pub fn accepted(drafted: &[i64], target: &[i64]) -> usize {
    // TODO: count the draft tokens equal to the target's choice at the same place, up to
    // the first that differs.
    let _ = (drafted, target);
    todo!("accepted: how many draft tokens the target keeps")
}
