//! Normal floats: the two Box–Muller recipes behind `randn` and `normal_`.
//!
//! Box–Muller turns two uniforms into two independent standard normals:
//! `R = sqrt(-2 ln(1 - a))`, `Θ = 2π·b`, then `R cos Θ` and `R sin Θ`. PyTorch's CPU kernel has
//! two implementations and picks one by the element count and contiguity alone:
//!
//! * **block path** (contiguous and at least 16 elements): float32 uniforms from single draws,
//!   transformed 16 slots at a time with the float32 log and sincos of `avx_mathfun.rs`;
//! * **scalar path** (fewer than 16 elements, or a non-contiguous view): double uniforms from
//!   two draws each and the C library's `log1p`/`sin`/`cos` in f64 (Rust's `ln_1p`, `sin` and
//!   `cos` call the same libm that PyTorch does). Each pair yields one value now and caches the
//!   other for the next scalar-path value, even in a later call.

use std::f64::consts::TAU;

use super::Generator;
use crate::kernels::avx_mathfun;

/// Elements per block of the block path (two AVX registers of 8 floats).
const BLOCK: usize = 16;
/// `f32(2π)`: the block path scales the angle by the float constant, not by the double 2π.
const TWO_PI: f32 = f32::from_bits(0x40C9_0FDB); // 6.2831855

impl Generator {
    /// `normal_(mean, std)` on a float32 tensor (and so `torch.randn`, which is `normal_(0, 1)`).
    ///
    /// With `contiguous` set and at least 16 elements this takes PyTorch's block path: all
    /// slots are filled with float uniforms first, then each block of 16 is transformed in
    /// place, slot `j` paired with slot `j + 8`. If the length is not a multiple of 16, 16 fresh
    /// uniforms then overwrite the last 16 slots, which are transformed as one more block. This
    /// path neither reads nor clears the cached spare value.
    ///
    /// Otherwise each value comes from the double-precision scalar path, which serves the cached
    /// spare value first when there is one (see the module docs).
    ///
    /// # Shapes
    ///
    /// `out`: any length, filled in memory order. `contiguous` says whether the tensor behind
    /// `out` is contiguous (a transposed view is not, whatever its length).
    ///
    /// # Panics
    ///
    /// If `std < 0` (PyTorch raises an error there).
    pub fn fill_normal(
        &mut self,
        out: &mut [f32],
        mean: f64,
        std: f64,
        contiguous: bool,
    ) {
        assert!(std >= 0.0, "normal expects std >= 0.0, but found std {std}");
        if contiguous && out.len() >= BLOCK {
            // The AVX2 kernel takes its parameters as float32.
            self.fill_normal_blocks(out, mean as f32, std as f32);
        } else {
            for slot in out {
                // The C++ is `val * std + mean`, which GCC presumably contracts in the AVX2 build.
                // Fused or not, no test against PyTorch could tell once narrowed to float32.
                *slot = self.next_double_normal().mul_add(std, mean) as f32;
            }
        }
    }

    /// The block path, for `out.len() >= 16`.
    fn fill_normal_blocks(&mut self, out: &mut [f32], mean: f32, std: f32) {
        for slot in out.iter_mut() {
            *slot = self.next_unit_f32();
        }
        let (blocks, rest) = out.as_chunks_mut::<BLOCK>();
        let ragged = !rest.is_empty();
        for block in blocks {
            box_muller_block(block, mean, std);
        }
        // A ragged end is not transformed from the uniforms already there: the kernel draws 16
        // new ones into the *last* 16 slots (overwriting finished values) and transforms those.
        // `last_chunk_mut` always succeeds, the block path only runs for 16 elements or more.
        if ragged && let Some(tail) = out.last_chunk_mut::<BLOCK>() {
            for slot in tail.iter_mut() {
                *slot = self.next_unit_f32();
            }
            box_muller_block(tail, mean, std);
        }
    }

    /// One standard normal from the scalar path (`at::normal_distribution<double>`).
    fn next_double_normal(&mut self) -> f64 {
        if let Some(spare) = self.next_double_normal.take() {
            return spare;
        }
        // The first uniform makes the angle, the second the radius.
        let u1 = self.next_unit_f64();
        let u2 = self.next_unit_f64();
        let radius = (-2.0 * (-u2).ln_1p()).sqrt();
        let theta = TAU * u1;
        self.next_double_normal = Some(radius * theta.sin());
        radius * theta.cos()
    }
}

/// `normal_fill_16_AVX2`: turns 16 uniforms into 16 normals in place, slot `j` (giving the
/// cosine value) paired with slot `j + 8` (giving the sine value).
fn box_muller_block(block: &mut [f32; BLOCK], mean: f32, std: f32) {
    let (cos_half, sin_half) = block.split_at_mut(BLOCK / 2);
    for (a, b) in cos_half.iter_mut().zip(sin_half) {
        // 1 - a is exact and at least 2^-24, so the log is finite.
        let radius = (-2.0 * avx_mathfun::log(1.0 - *a)).sqrt();
        let theta = TWO_PI * *b;
        let (sin, cos) = avx_mathfun::sincos(theta);
        // The kernel rounds R·cos and R·sin, then applies `_mm256_fmadd_ps` explicitly: this
        // FMA is in the source, not a compiler contraction.
        *a = (radius * cos).mul_add(std, mean);
        *b = (radius * sin).mul_add(std, mean);
    }
}
