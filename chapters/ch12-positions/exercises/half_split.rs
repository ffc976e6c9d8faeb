//! Exercise: RoPE with half-split pairs. Replace the `todo!()`; test with
//! `cargo test -p ch12-positions --features exercise rope_half_split`.

use shared::Tensor;

/// Rotates pair `i` (features `i` and `i + d/2`) of the token at position `m` by `m·θ_i`,
/// `θ_i = 1 / base^(2i/d)`, positions `0 .. tokens - 1`.
///
/// # Shapes
/// `x`: `[.., tokens, d]` (`d` even). Returns the shape of `x`.
pub fn rope_half_split(x: &Tensor, base: f32) -> Tensor {
    // TODO: the angles m·θ_i come from `crate::frequencies::rope_angles` as
    // [tokens, d/2]; every feature needs its pair's angle; then
    // x·cos + rotate_half(x)·sin.
    let _ = (x, base);
    todo!("rope_half_split")
}
