//! Exercise (derive): how many AdamW steps halve a weight that gets no gradient? Replace
//! the `todo!()`; test with `cargo test -p ch11-training --features exercise
//! steps_to_halve`.

/// The number of AdamW steps after which a parameter with a zero gradient is at most half
/// its start: the smallest `t` with the parameter at most half of where it began.
///
/// # Shapes
/// Scalars: the learning rate and the weight decay, with `0 < lr · wd < 1`.
pub fn steps_to_halve(lr: f64, weight_decay: f64) -> u64 {
    // TODO: what does one step of AdamW do to a parameter whose gradient is 0 (and whose
    // m and v are therefore 0)? Repeat it t times and solve for t.
    let _ = (lr, weight_decay);
    todo!("steps_to_halve")
}
