//! RoPE with interleaved pairs, as Meta's Llama code writes it, with complex numbers.
//!
//! Features `2i` and `2i + 1` form pair `i`, read as the complex number `a + ib`. Turning it
//! by `φ = m·θ_i` is one complex product with `cos φ + i·sin φ`:
//! `(a + ib)(c + is) = (a·c − b·s) + i(a·s + b·c)`. Meta's code builds the table of
//! `cos φ + i·sin φ` with `torch.polar`, views `x` as complex numbers
//! (`view_as_complex`), multiplies, and views the result as pairs of floats again
//! (`view_as_real`, `flatten`). Our tensors have no complex dtype, so the real parts (the
//! even features) and the imaginary parts (the odd ones) are kept as two tensors, with the
//! same arithmetic.
//!
//! The bits are PyTorch's: `polar` takes the C library's `cosf`/`sinf`, which ours calls
//! too, and PyTorch's complex product rounds each of the four products and then the sum, in
//! the order written above. (It does so for blocks of 8 complex numbers along the innermost
//! run of memory; a leftover tail shorter than 8 is computed with fused multiply-adds, which
//! can change a last bit. With 6 tokens × 4 pairs = 24 there is no tail.)

use shared::{Tensor, arange, polar, stack};

use crate::frequencies::rope_angles;

/// Rotates every interleaved pair of features (`2i`, `2i + 1`) of the token at position `m`
/// by `m·θ_i` (positions `0 .. tokens - 1`, `θ_i = 1 / base^(2i/d)`).
///
/// # Shapes
/// `x`: `[.., tokens, d]` (e.g. `[batch, heads, tokens, head_dim]`; `d` even). Returns the
/// shape of `x`.
// ANCHOR: rope_interleaved
pub fn rope_interleaved(x: &Tensor, base: f32) -> Tensor {
    let freqs = rope_angles(x.size(-2), x.size(-1), base); // [tokens, d/2]: φ = m·θ_i
    let (c, s) = polar(&freqs.ones_like(), &freqs); // cos φ + i·sin φ, as two tensors

    // View each pair (x[2i], x[2i+1]) as the complex number a + ib:
    // [.., tokens, d/2] each.
    let d = x.size(-1);
    let a = x.index_select(-1, &arange(0, d, 2));
    let b = x.index_select(-1, &arange(1, d, 2));

    let real = &(&a * &c) - &(&b * &s); // a·c − b·s
    let imag = &(&a * &s) + &(&b * &c); // a·s + b·c
    // Interleave again: [.., tokens, d/2, 2] flattened to real, imag, real, imag, ..
    stack(&[real, imag], -1).flatten(-2, -1)
}
// ANCHOR_END: rope_interleaved
