//! One parameter's AdamW update, kept in its own file because it is an exercise.

use super::StepConstants;

/// Updates one parameter `p` with its gradient `g` and its moments `m`, `v`: AdamW's
/// lines as the chapter writes them, the decoupled weight decay first, then the two
/// running means, then the step with both bias corrections.
///
/// # Shapes
/// Scalars: one element of a parameter and of its two moments.
// ANCHOR: adamw_update
pub fn adamw_update(
    p: &mut f32,       // the parameter
    g: f32,            // its gradient
    m: &mut f32,       // the first moment, a running mean of g
    v: &mut f32,       // the second moment, a running mean of g²
    k: &StepConstants, // this step's constants
) {
    *p *= k.decay; // θ ← θ (1 − ηλ)
    *m = k.beta1 * *m + k.one_minus_beta1 * g; // m ← β₁ m + (1 − β₁) g
    *v = k.beta2 * *v + k.one_minus_beta2 * g * g; // v ← β₂ v + (1 − β₂) g²
    let den = v.sqrt() / k.bias_correction2_sqrt + k.eps; // √v / √(1 − β₂ᵗ) + ε
    *p += k.neg_step_size * *m / den; // θ ← θ − η / (1 − β₁ᵗ) · m / den
}
// ANCHOR_END: adamw_update
