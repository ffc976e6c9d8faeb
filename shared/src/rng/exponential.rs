//! Exponential noise: `exponential_(lambda)`, what `torch.multinomial` divides by.
//!
//! Each value is `-ln(1 - u) / lambda` for a double uniform `u` (two draws), computed in
//! double with the C library's `log1p` and narrowed to float32 once.

use super::Generator;

impl Generator {
    /// `exponential_(lambda)` on a float32 tensor: two draws per element, in the order of
    /// `out`.
    ///
    /// The C++ computes `-1.0 / lambda * log1p(-u)` in double; Rust's `ln_1p` calls the same
    /// C library function. `u` can be exactly 0 (one chance in 2^53), giving 0.
    ///
    /// # Shapes
    /// `out`: any length, filled in memory order.
    pub fn fill_exponential(&mut self, out: &mut [f32], lambda: f64) {
        for slot in out {
            let u = self.next_unit_f64();
            *slot = (-1.0 / lambda * (-u).ln_1p()) as f32;
        }
    }
}
