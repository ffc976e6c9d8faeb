//! The values of a float `arange` in the order of PyTorch's CPU kernel.

/// PyTorch's float `arange` values: `start` and `step` stay in `f64` and each value is
/// rounded to `f32` once, so `arange(0., 1., 0.1)` ends in `0.9000` (`0.9` rounded), not in
/// `0.90000004` (nine `f32` steps of `0.1f32` added up).
///
/// The exact bits follow PyTorch's CPU kernel, whose `start + step·i` is compiled to one
/// fused multiply-add (`step.mul_add(i, start)`: a single rounding, which matters where the
/// values cross 0). It fills 16 values at a time with two vectors of 8: each vector starts
/// from `base = f32(start + step·i)` and its lanes are `f32(base + j·step)`, `j = 0..8`, again
/// fused, from the rounded `base`; the last `n mod 16` values are `f32(start + step·i)`. A
/// lane's two roundings can differ from the tail's one in the last bit, so both are
/// reproduced. (Above 32768 values PyTorch splits the range between its threads, each piece
/// with its own 16-value blocks; this is the one-thread layout.)
pub(crate) fn float_range(start: f64, step: f64, n: usize, values: &mut Vec<f32>) {
    const LANES: usize = 8;
    let at = |i: usize| step.mul_add(i as f64, start) as f32;
    let mut i = 0;
    while i + 2 * LANES <= n {
        for _ in 0..2 {
            let base = at(i) as f64;
            values.extend((0..LANES).map(|j| (j as f64).mul_add(step, base) as f32));
            i += LANES;
        }
    }
    values.extend((i..n).map(at));
}
