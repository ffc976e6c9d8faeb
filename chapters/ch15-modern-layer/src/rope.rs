//! RoPE inside the heads: the queries and keys of every head turned by their position.
//!
//! Chapter 12 turned a whole vector; a 2026 layer turns each head's queries and keys
//! after the head split (and after QK-norm), and leaves the values alone. Pair `i` of a
//! head of `d` features, features `i` and `i + d/2` (the halves of `rotate_half`), turns
//! by `p·θ_i` at position `p`, where `θ_i = base^(-2i/d)`. Llama 2 used base 10 000;
//! Llama 3 uses 500 000, which slows every pair down so that distant positions stay
//! apart, and Llama 3.1 slows the slowest pairs a further 8 times.
//!
//! The angles and their cosines and sines are computed in float64 and rounded once to
//! float32, as some model code does: a float32 `cos` differs between processors in its
//! last bit, a float64 one rounded to float32 does not.

use shared::Tensor;

pub use ch12_positions::rotate_half::rotate_half;

/// Llama 3.1's frequency scaling: scale factor 8, low- and high-frequency factors 1 and 4,
/// 8192 original context tokens.
pub const LLAMA31_FACTOR: f64 = 8.0;
/// Below this many tokens per turn (8192 / 4) a pair keeps its frequency.
pub const LLAMA31_HIGH_WAVELEN: f64 = 8192.0 / 4.0;
/// Above this many tokens per turn (8192 / 1) a pair turns 8 times slower.
pub const LLAMA31_LOW_WAVELEN: f64 = 8192.0 / 1.0;

/// The frequency of every pair of a head, `θ_i = base^(-2i/d)`, in float64, with
/// Llama 3.1's scaling if asked: pairs that turn within 2048 tokens keep their frequency,
/// those that need more than 8192 turn 8 times slower, and those between blend the two.
///
/// # Shapes
/// Returns `head_dim / 2` frequencies.
// ANCHOR: inv_freq
pub fn inv_freq(head_dim: usize, theta: f64, llama31_scaling: bool) -> Vec<f64> {
    (0..head_dim / 2)
        .map(|i| 1.0 / theta.powf((2 * i) as f64 / head_dim as f64))
        .map(|f| if llama31_scaling { llama31_scale(f) } else { f })
        .collect()
}

fn llama31_scale(freq: f64) -> f64 {
    let wavelen = 2.0 * std::f64::consts::PI / freq; // tokens per full turn
    if wavelen < LLAMA31_HIGH_WAVELEN {
        freq
    } else if wavelen > LLAMA31_LOW_WAVELEN {
        freq / LLAMA31_FACTOR
    } else {
        let smooth = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
        (1.0 - smooth) * freq / LLAMA31_FACTOR + smooth * freq
    }
}
// ANCHOR_END: inv_freq

/// The cosines and sines of every (position, pair) angle, each pair's twice (for the two
/// halves), computed in float64 and rounded once to float32.
///
/// # Shapes
/// Returns two `[positions.len(), head_dim]` tables.
// ANCHOR: rope_tables
pub fn rope_tables(
    positions: &[usize],
    head_dim: usize,
    theta: f64,
    llama31_scaling: bool,
) -> (Tensor, Tensor) {
    let freqs = inv_freq(head_dim, theta, llama31_scaling);
    let mut cos = Vec::with_capacity(positions.len() * head_dim);
    let mut sin = Vec::with_capacity(positions.len() * head_dim);
    for &p in positions {
        for _half in 0..2 {
            for f in &freqs {
                let angle = p as f64 * f;
                cos.push(angle.cos() as f32);
                sin.push(angle.sin() as f32);
            }
        }
    }
    let shape = [positions.len(), head_dim];
    (Tensor::from_vec(cos, &shape), Tensor::from_vec(sin, &shape))
}
// ANCHOR_END: rope_tables

/// Every pair of `x`'s heads turned by its position's angle:
/// `x · cos + rotate_half(x) · sin`.
///
/// # Shapes
/// `x`: `[batch, heads, tokens, head_dim]`; `cos`, `sin`: `[tokens, head_dim]`.
/// Returns the shape of `x`.
// ANCHOR: apply_rope
pub fn apply_rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Tensor {
    x * cos + rotate_half(x) * sin
}
// ANCHOR_END: apply_rope
