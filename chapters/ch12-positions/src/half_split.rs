//! RoPE with half-split pairs, as Hugging Face's Llama and GPT-NeoX write it.
//!
//! Feature `i` and feature `i + d/2` form pair `i`, which turns by the angle `m·θ_i` at
//! position `m`. With `emb = cat(freqs, freqs)` every feature gets its pair's angle, and the
//! rotation of all pairs at once is `x·cos(emb) + rotate_half(x)·sin(emb)`:
//! for pair `(a, b)` that gives `(a·cos − b·sin, b·cos + a·sin)`.
//!
//! `Tensor::cos` and `Tensor::sin` are computed in float64 and rounded once to float32, as
//! the reference script computes them (`emb.double().cos().float()`): float32
//! `torch.cos`/`torch.sin` come from a CPU library whose last bit depends on the processor,
//! and `a·cos − b·sin` can cancel and show that bit (see the appendix on matching PyTorch).

use shared::{Tensor, cat};

use crate::frequencies::rope_angles;
use crate::rotate_half::rotate_half;

/// Rotates every half-split pair of features of the token at position `m` by `m·θ_i`
/// (positions `0 .. tokens - 1`, `θ_i = 1 / base^(2i/d)`).
///
/// # Shapes
/// `x`: `[.., tokens, d]` (queries or keys, e.g. `[batch, heads, tokens, head_dim]`; `d`
/// even). Returns the shape of `x`.
// ANCHOR: rope_half_split
pub fn rope_half_split(x: &Tensor, base: f32) -> Tensor {
    let freqs = rope_angles(x.size(-2), x.size(-1), base); // [tokens, d/2]
    // [tokens, d]: pair i's angle at i and at i + d/2.
    let emb = cat(&[&freqs, &freqs], -1);
    let (cos, sin) = (emb.cos(), emb.sin());
    &(x * &cos) + &(&rotate_half(x) * &sin)
}
// ANCHOR_END: rope_half_split
