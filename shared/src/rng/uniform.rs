//! Uniform floats: from one or two 32-bit draws to a number in `[0, 1)`, then to `[from, to)`.
//!
//! PyTorch has two ways to make a unit-interval number, and which one a kernel uses is part of
//! its result:
//!
//! * the **float** transform keeps the low 24 bits of one draw (float32 has a 24-bit significand)
//!   and scales them by `2^-24`. `rand`, `uniform_` and the block normal path use it;
//! * the **double** transform keeps the low 53 bits of a `random64()` (two draws) and scales them
//!   by `2^-53`. Bernoulli/dropout and the scalar normal path use it.
//!
//! Both are exact: every value is a multiple of the step and fits its type.

use super::Generator;

/// `2^-24`, the step of the float transform.
const FLOAT_STEP: f32 = 1.0 / (1u32 << 24) as f32;
/// `2^-53`, the step of the double transform.
const DOUBLE_STEP: f64 = 1.0 / (1u64 << 53) as f64;

impl Generator {
    /// One draw to a float in `[0, 1 - 2^-24]`: the low 24 bits times `2^-24`.
    pub(super) fn next_unit_f32(&mut self) -> f32 {
        (self.random() & 0x00FF_FFFF) as f32 * FLOAT_STEP
    }

    /// Two draws (one `random64`) to a double in `[0, 1)`: the low 53 bits times `2^-53`.
    pub(super) fn next_unit_f64(&mut self) -> f64 {
        (self.random64() & ((1 << 53) - 1)) as f64 * DOUBLE_STEP
    }

    /// `uniform_(from, to)` on a float32 tensor: one draw per element, in the order of `out`.
    ///
    /// The bounds are narrowed to float32 once, `a = f32(from)` and `b = f32(to)`; each value is
    /// `fma(u, b - a, a)` with `u` from the float transform, and a value that rounds up to `b` is
    /// replaced by `a`, so the result stays in `[a, b)`. `uniform(0, 1)` is `torch.rand`.
    ///
    /// # Shapes
    ///
    /// `out`: any length, filled in memory order (row-major for a fresh tensor, storage order for
    /// a view such as a transpose).
    ///
    /// # Panics
    ///
    /// If `from > to` (PyTorch raises an error there).
    pub fn fill_uniform(&mut self, out: &mut [f32], from: f64, to: f64) {
        assert!(
            from <= to,
            "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
        );
        let a = from as f32;
        let b = to as f32;
        let span = b - a;
        for slot in out {
            let u = self.next_unit_f32();
            // The C++ is `x * (to - from) + from`. PyTorch's AVX2 build is compiled by GCC with
            // `-mfma`, which contracts that into one fused multiply-add: one rounding, not two.
            // Unfused, about half of all `nn.Linear` weights come out 1 ulp off.
            let value = u.mul_add(span, a);
            *slot = if value == b { a } else { value };
        }
    }
}
