//! One parameter's AdamW update, kept in its own file because it is an exercise.

use super::StepConstants;

/// Updates one parameter `p` with its gradient `g` and its moments `m`, `v`, in the seven
/// float32 operations of PyTorch's single-tensor AdamW, each rounded once:
///
/// 1. decay: `p ← p · (1 − lr·wd)`;
/// 2. `m ← m + (1 − β₁)(g − m)`, the difference rounded, then one fused multiply-add
///    (`lerp`);
/// 3. `v ← v · β₂`;
/// 4. `v ← v + ((1 − β₂) · g) · g`, the first product rounded, the rest fused
///    (`addcmul`);
/// 5. `den ← √v / √(1 − β₂ᵗ)`;
/// 6. `den ← den + eps`;
/// 7. `p ← p + (−step_size · m) / den` (`addcdiv`: product, quotient, sum).
///
/// The square root is the IEEE one; PyTorch's is MKL's, which is 1 ulp off on a few
/// values in a thousand (the book's chapter 11 measures what that changes).
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
    *p *= k.decay;
    *m = k.one_minus_beta1.mul_add(g - *m, *m);
    *v *= k.beta2;
    *v = (k.one_minus_beta2 * g).mul_add(g, *v);
    let den = v.sqrt() / k.bias_correction2_sqrt + k.eps;
    *p += (k.neg_step_size * *m) / den;
}
// ANCHOR_END: adamw_update
