//! Decoupled weight decay on its own (an exercise): how long until it halves a weight.
//!
//! A parameter whose gradient is always 0 keeps `m = v = 0`, so AdamW's only change to it
//! is the decay, `θ ← θ (1 − lr · wd)`: after `t` steps `θ₀ (1 − lr · wd)ᵗ`. It halves once
//! `t ≥ ln 2 / −ln(1 − lr · wd)`, about `ln 2 / (lr · wd)` steps: 6932 for the chapter's
//! `lr = wd = 0.01`. Over the chapter's 60 steps the decay takes 0.6 % off a weight.

/// The number of AdamW steps after which a parameter with a zero gradient is at most half
/// its start: the smallest `t` with `(1 − lr · wd)ᵗ ≤ 1/2`.
///
/// # Shapes
/// Scalars: the learning rate and the weight decay, with `0 < lr · wd < 1`.
// ANCHOR: steps_to_halve
pub fn steps_to_halve(lr: f64, weight_decay: f64) -> u64 {
    let per_step = 1.0 - lr * weight_decay;
    (0.5f64.ln() / per_step.ln()).ceil() as u64
}
// ANCHOR_END: steps_to_halve
