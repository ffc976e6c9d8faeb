//! Exercise: speculative sampling's check of one drafted token. Replace the `todo!()`;
//! test with `cargo test -p ch17-inference --features exercise accept_or_replace`.

use shared::Tensor;

/// Keeps the drafted token or draws its replacement. The draws, in this order: one
/// uniform number `r` (`rand`); the token is kept (`None`) when `r < p(x)/q(x)`; otherwise
/// one token (`multinomial`, which normalises its weights) from `max(0, p − q)`,
/// returned as `Some(y)`.
///
/// # Shapes
/// `p`, `q`: `[1, vocab]` probabilities of the target and the draft.
pub fn accept_or_replace(p: &Tensor, q: &Tensor, drafted: i64) -> Option<i64> {
    // TODO: keep the drafted token x with probability min(1, p(x)/q(x)); when it is
    // rejected, draw the token that replaces it in proportion to what p has and q lacks.
    // Before you write it: why does that make every token come out as often as p says?
    let _ = (p, q, drafted);
    todo!("accept_or_replace")
}
