//! Bernoulli masks and dropout.
//!
//! `nn.Dropout(p)` in training mode (on the CPU) runs ATen's generic dropout: it fills a
//! `noise` tensor with `bernoulli_(1 - p)`, divides it by `1 - p`, and multiplies the input by
//! it. The mask draws one double uniform (two 32-bit draws) per element and compares it, in
//! double, with `1 - p`; the scaling happens in float32.

use super::Generator;

impl Generator {
    /// `bernoulli_(p_keep)` on a float32 tensor: `1.0` where a double uniform is below `p_keep`,
    /// else `0.0`. Two draws per element.
    ///
    /// # Shapes
    ///
    /// `out`: any length, filled in memory order.
    pub fn fill_bernoulli(&mut self, out: &mut [f32], p_keep: f64) {
        for slot in out {
            *slot = if self.next_unit_f64() < p_keep {
                1.0
            } else {
                0.0
            };
        }
    }
}

/// `nn.Dropout(p)` in training mode (or `F.dropout(x, p, training=True)`), in place.
///
/// For `0 < p < 1` each value is kept, scaled by `1 / (1 - p)`, or zeroed, with the mask drawn as
/// [`Generator::fill_bernoulli`] draws it with `p_keep = 1 - p`. Like PyTorch, `p == 0` returns
/// the values untouched and `p == 1` multiplies them by zero; neither makes any draws.
///
/// The scale is the float32 division `1.0 / f32(1 - p)`, not `f32(1 / (1 - p))`: for about a
/// quarter of all `p` these differ (`p = 0.1` gives `1.1111112`, bits `0x3F8E38E4`).
///
/// # Shapes
///
/// `values`: any length, in memory order. A transposed view gets its mask in storage order,
/// as in PyTorch, so pass the values as they lie in memory.
///
/// # Panics
///
/// If `p` is not in `[0, 1]`.
pub fn dropout_in_place(generator: &mut Generator, values: &mut [f32], p: f64) {
    assert!(
        (0.0..=1.0).contains(&p),
        "dropout probability has to be between 0 and 1, but got {p}"
    );
    if p == 0.0 {
        return;
    }
    if p == 1.0 {
        // `input * 0`, so NaN and infinities become NaN and negative values -0.0, as in PyTorch.
        for value in values {
            *value *= 0.0;
        }
        return;
    }
    // PyTorch computes `1 - p` in double: compared in double, narrowed for the division.
    let p_keep = 1.0 - p;
    let kept_scale = 1.0 / p_keep as f32;
    // One pass instead of PyTorch's three (mask, divide, multiply); the draws and the float
    // operations are the same: a dropped element's noise is `0.0 / f32(1 - p) = 0.0`.
    for value in values {
        let noise = if generator.next_unit_f64() < p_keep {
            kept_scale
        } else {
            0.0
        };
        *value *= noise;
    }
}
