//! Speculative sampling's check of one drafted token (Chen et al., "Accelerating Large
//! Language Model Decoding with Speculative Sampling"; Leviathan et al., "Fast Inference
//! from Transformers via Speculative Decoding"): keep it with probability
//! `min(1, p(x)/q(x))`, else draw its replacement from the leftover mass `max(0, p − q)`,
//! so that the token that comes out is distributed exactly as the target's `p`.

use shared::{Tensor, rand};

/// Keeps the drafted token or draws its replacement. The draws, in this order: one
/// uniform number `r` (`rand`); the token is kept (`None`) when `r < p(x)/q(x)`; otherwise
/// one token (`multinomial`, which normalises its weights) from `max(0, p − q)`,
/// returned as `Some(y)`.
///
/// # Shapes
/// `p`, `q`: `[1, vocab]` probabilities of the target and the draft.
// ANCHOR: accept_or_replace
pub fn accept_or_replace(p: &Tensor, q: &Tensor, drafted: i64) -> Option<i64> {
    let ratio = p.select(1, drafted).item() / q.select(1, drafted).item();
    let r = rand(&[1]).item();
    if r < ratio {
        return None;
    }
    let residual = (p - q).clamp_min(0.0);
    Some(residual.multinomial(1, false).item())
}
// ANCHOR_END: accept_or_replace
