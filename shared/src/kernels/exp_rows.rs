//! SLEEF's `exp` over a whole row at once, for the softmax kernels.
//!
//! [`expf_u10`] is one float in, one float out, and every call asks which instructions the
//! processor has. A softmax row calls it for each of its elements, so here the same steps run
//! in one loop compiled with 8-lane vectors and fused multiply-adds, which the compiler
//! turns into vector instructions doing 8 elements per step. Each lane does exactly the
//! scalar steps (no operation is reordered or fused differently), so every result has the
//! bits of [`expf_u10`].

use super::vec_math::{expf_u10, glibc_expf};
// The steps inlined into the loop compiled for AVX2, which only x86-64 has.
#[cfg(target_arch = "x86_64")]
use super::vec_math::expf_u10_steps;

/// `out[i] = expf_u10(x[i] − shift)`: the vector lanes' `exp` of a row less its maximum.
///
/// # Shapes
/// `x` and `out`: the same length.
pub(crate) fn sleef_exp_shifted(x: &[f32], shift: f32, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { sleef_exp_shifted_avx2(x, shift, out) };
        return;
    }
    for (o, &x) in out.iter_mut().zip(x) {
        *o = expf_u10(x - shift);
    }
}

/// [`sleef_exp_shifted`]'s loop with the steps of [`expf_u10`] inlined, compiled for AVX2
/// and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sleef_exp_shifted_avx2(x: &[f32], shift: f32, out: &mut [f32]) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = expf_u10_steps(x - shift);
    }
}

/// `out[i] = glibc_expf(x[i] − shift)`: the portable build's `exp` of a row less its
/// maximum.
///
/// # Shapes
/// `x` and `out`: the same length.
pub(crate) fn glibc_exp_shifted(x: &[f32], shift: f32, out: &mut [f32]) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = glibc_expf(x - shift);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane has the scalar function's bits: a sweep over the whole range of `exp`'s
    /// argument, the ends where it under- and overflows, and the special values, at lengths
    /// that leave partial vectors.
    #[test]
    fn the_row_has_the_bits_of_the_scalar_exp() {
        let mut values: Vec<f32> =
            (0..40_000).map(|i| -120.0 + i as f32 * 0.00537).collect();
        values.extend([
            0.0,
            -0.0,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::NAN,
            -104.0,
            -103.99,
            100.0,
            100.01,
            f32::MIN,
            f32::MAX,
            f32::from_bits(1),
        ]);
        for len in [values.len(), 31, 7, 1, 0] {
            for shift in [0.0f32, 3.25, -1.5] {
                let row = &values[values.len() - len..];
                let mut out = vec![0.0f32; len];
                sleef_exp_shifted(row, shift, &mut out);
                for (&x, o) in row.iter().zip(&out) {
                    assert_eq!(
                        o.to_bits(),
                        expf_u10(x - shift).to_bits(),
                        "exp({x} - {shift})"
                    );
                }
                glibc_exp_shifted(row, shift, &mut out);
                for (&x, o) in row.iter().zip(&out) {
                    assert_eq!(
                        o.to_bits(),
                        glibc_expf(x - shift).to_bits(),
                        "expf({x} - {shift})"
                    );
                }
            }
        }
    }
}
