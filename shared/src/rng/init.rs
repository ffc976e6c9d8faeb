//! The bounds `nn.Linear` draws its initial parameters from.
//!
//! `nn.Linear.reset_parameters` fills the weight with `kaiming_uniform_(a = sqrt(5))` and the
//! bias with `uniform_(-1/sqrt(in), 1/sqrt(in))`. Both bounds are computed by Python in double
//! precision and narrowed to float32 only inside `uniform_`, so they are computed here the same
//! way, operation for operation.

/// The bound of `kaiming_uniform_(weight, a = sqrt(5))` for an `nn.Linear` weight, computed in
/// f64 exactly as `torch/nn/init.py` does: `gain = sqrt(2 / (1 + a²))`,
/// `bound = sqrt(3) · gain / sqrt(in_features)`.
///
/// `nn.Linear(in, out)` then draws its weight with
/// `generator.fill_uniform(&mut weight, -bound, bound)`: `out · in` values in row-major order.
/// (The float32 bound equals `f32(1 / sqrt(in))` for all practical sizes, but this is the
/// formula PyTorch evaluates.)
///
/// # Shapes
///
/// `in_features`: the weight's fan-in, its number of columns (`weight` is `(out, in)`).
/// For `in_features == 0` the bound is infinite, but then there are no weights to draw.
pub fn linear_weight_bound(in_features: usize) -> f64 {
    let a = 5.0_f64.sqrt();
    // Python's `a**2`, which is the correctly rounded square 5.000000000000001, not 5.
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let std = gain / (in_features as f64).sqrt();
    3.0_f64.sqrt() * std
}

/// The bias bound of `nn.Linear`, `1 / sqrt(in_features)` in f64 (and 0 for `in_features == 0`).
///
/// `nn.Linear(in, out, bias=True)` draws its bias with
/// `generator.fill_uniform(&mut bias, -bound, bound)`: `out` values, right after the weight.
/// (For `in_features == 0` PyTorch's bound is the Python integer 0, whose negation is `+0.0`;
/// pass `0.0` rather than `-0.0` as the lower bound there, or the bias comes out as `-0.0`.)
///
/// # Shapes
///
/// `in_features`: the layer's fan-in (`bias` has `out` elements).
pub fn linear_bias_bound(in_features: usize) -> f64 {
    if in_features == 0 {
        0.0
    } else {
        1.0 / (in_features as f64).sqrt()
    }
}
