//! Exercise: the sinusoidal position encodings. Replace the `todo!()`; test with
//! `cargo test -p ch12-positions --features exercise sinusoidal_encoding`.

use shared::Tensor;

/// The `[positions, d]` matrix of sinusoidal encodings: `sin(pos·θ_i)` in feature `2i`,
/// `cos(pos·θ_i)` in feature `2i + 1`, with `θ_i = 1 / 10000^(2i/d)`.
///
/// # Shapes
/// Returns `[positions, d]` (`d` even).
pub fn sinusoidal_encoding(positions: usize, d: usize) -> Tensor {
    // TODO: take the angles pos·θ_i from `crate::frequencies::rope_angles`, and place their
    // sines and cosines side by side so that the features alternate sin, cos, sin, cos.
    let _ = (positions, d);
    todo!("sinusoidal_encoding")
}
