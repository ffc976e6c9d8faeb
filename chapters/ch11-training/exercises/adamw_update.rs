//! Exercise: one parameter's AdamW update. Replace the `todo!()`; test with
//! `cargo test -p ch11-training --features exercise adamw_update`.

use super::StepConstants;

/// Updates one parameter `p` with its gradient `g` and its moments `m`, `v`, in the seven
/// float32 operations of PyTorch's AdamW (see the chapter).
///
/// # Shapes
/// Scalars: one element of a parameter and of its two moments.
pub fn adamw_update(
    p: &mut f32,       // the parameter
    g: f32,            // its gradient
    m: &mut f32,       // the first moment, a running mean of g
    v: &mut f32,       // the second moment, a running mean of g²
    k: &StepConstants, // this step's constants
) {
    // TODO: decay p; move m towards g (a lerp); decay v and add (1 − β₂)·g²; divide by
    // √v (bias-corrected, plus eps) to step p.
    let _ = (p, g, m, v, k);
    todo!("adamw_update")
}
