//! Exercise (derive, then check): position interpolation. Replace the `todo!()`; test with
//! `cargo test -p ch12-positions --features exercise interpolated_offset`.

/// The offset of plain RoPE whose score equals that of a query at `m` and a key at `n`
/// when both positions are divided by `scale`.
///
/// # Shapes
/// Scalars.
pub fn interpolated_offset(m: f32, n: f32, scale: f32) -> f32 {
    // TODO: write the score of the query at m / scale and the key at n / scale with the
    // rotation matrices R(φ), as the chapter does for m and n, and simplify.
    let _ = (m, n, scale);
    todo!("interpolated_offset")
}
