//! What Adam's bias corrections are for (an exercise): the first step without them.
//!
//! `m` and `v` start at 0, so after one step `m = (1 − β₁) g` and `v = (1 − β₂) g²`, both
//! far below the gradient's real mean and mean square. Without the corrections the step
//! is `lr · m / √v = lr · (1 − β₁) / √(1 − β₂)` (against the sign of `g`, whatever its
//! size): with the defaults, `lr · 0.1 / 0.0316 ≈ 3.16 lr`. Dividing `m` by `1 − β₁` and `v`
//! by `1 − β₂` makes it exactly `lr`.

/// How far the first step of Adam moves a parameter (weight decay and `eps` left out) if
/// both bias corrections are dropped.
///
/// # Shapes
/// Scalars: the learning rate and the two betas, in `(0, 1)`.
// ANCHOR: uncorrected_first_step
pub fn uncorrected_first_step(lr: f64, beta1: f64, beta2: f64) -> f64 {
    lr * (1.0 - beta1) / (1.0 - beta2).sqrt()
}
// ANCHOR_END: uncorrected_first_step
