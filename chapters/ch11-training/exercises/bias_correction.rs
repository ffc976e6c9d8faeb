//! Exercise (derive): the first step of Adam without its bias corrections. Replace the
//! `todo!()`; test with `cargo test -p ch11-training --features exercise
//! uncorrected_first_step`.

/// How far the first step of Adam moves a parameter (weight decay and `eps` left out) if
/// both bias corrections are dropped.
///
/// # Shapes
/// Scalars: the learning rate and the two betas, in `(0, 1)`.
pub fn uncorrected_first_step(lr: f64, beta1: f64, beta2: f64) -> f64 {
    // TODO: m and v start at 0. Write them after one step, then the step lr · m / √v.
    let _ = (lr, beta1, beta2);
    todo!("uncorrected_first_step")
}
