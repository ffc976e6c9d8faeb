//! Exercise (derive, then check): when QK-norm and RoPE may change places. Replace the
//! `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise norm_and_rope_commute`.

/// Whether QK-norm with the gains `gain` gives the same vectors before RoPE as after it,
/// for every head vector and every position.
///
/// # Shapes
/// `gain`: `[head_dim]`, `head_dim` even.
pub fn norm_and_rope_commute(gain: &[f32]) -> bool {
    // TODO: decide from the gains alone, without rotating anything. RoPE turns features i
    // and i + head_dim/2 together; what does a turn of a pair do to a vector whose two
    // features were scaled by different gains, and by equal ones?
    let _ = gain;
    todo!("norm_and_rope_commute")
}
