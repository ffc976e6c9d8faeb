//! Exercise: one parameter's AdamW update. Replace the `todo!()`; test with
//! `cargo test -p ch11-training --features exercise adamw_update`.

use super::StepConstants;

/// Updates one parameter `p` with its gradient `g` and its moments `m`, `v`: AdamW's
/// lines as the chapter writes them.
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
    // TODO: decay p; update the running means m and v; step p by the bias-corrected
    // m / (√v + eps), with the constants in k.
    let _ = (p, g, m, v, k);
    todo!("adamw_update")
}
