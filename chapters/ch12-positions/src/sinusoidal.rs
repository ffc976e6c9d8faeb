//! The sinusoidal position encodings of "Attention Is All You Need" (§3.5):
//!
//! `PE[pos, 2i] = sin(pos / 10000^(2i/d))`, `PE[pos, 2i+1] = cos(pos / 10000^(2i/d))`.
//!
//! Each pair of features is a point on a circle that turns by `θ_i` radians per position,
//! fast in the first pair and slower and slower along the vector. They are added to the
//! token embeddings before the first layer. A shift by `k` positions is then the same
//! rotation for every `pos`, which is what the authors hoped the model could use to attend
//! by relative position; RoPE makes that explicit.

use shared::{Tensor, stack};

use crate::frequencies::rope_angles;

/// The `[positions, d]` matrix of sinusoidal encodings, sines in the even features and
/// cosines in the odd ones, with `θ_i = 1 / 10000^(2i/d)` from
/// [`crate::frequencies::inv_freq`] (PyTorch: `pe[:, 0::2] = torch.sin(angles)`,
/// `pe[:, 1::2] = torch.cos(angles)`, taken in float64 and rounded once).
///
/// # Shapes
/// Returns `[positions, d]` (`d` even): row `pos` is the vector added to the token at
/// position `pos`.
// ANCHOR: sinusoidal_encoding
pub fn sinusoidal_encoding(positions: usize, d: usize) -> Tensor {
    let angles = rope_angles(positions, d, 10000.0); // [positions, d/2]: pos·θ_i
    // [positions, d/2, 2] with (sin, cos) side by side, then flattened:
    // sin, cos, sin, ...
    stack(&[angles.sin(), angles.cos()], -1).flatten(1, 2)
}
// ANCHOR_END: sinusoidal_encoding
