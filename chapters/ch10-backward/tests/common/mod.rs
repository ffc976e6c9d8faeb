//! Central differences, the independent check of a hand-written backward.

use ch10_backward::attention::{attention_backward, attention_forward};
use shared::nn::Dropout;
use shared::{Tensor, manual_seed};

/// The step of the central differences: large enough that float32 rounding of the
/// forward pass (about 1e-7 of each output) stays far below the difference, small enough
/// that the curvature's error (of order `STEP²`) does too.
pub const STEP: f32 = 1e-2;

/// `|numerical - analytic| <= ATOL + RTOL·|analytic|`.
pub const ATOL: f64 = 2e-3;
pub const RTOL: f64 = 2e-2;

/// `Σ weights ∘ out`, added up in f64: a loss whose gradient with respect to `out` is
/// `weights`.
pub fn weighted_sum(out: &Tensor, weights: &Tensor) -> f64 {
    out.to_vec()
        .iter()
        .zip(weights.to_vec())
        .map(|(&o, w)| o as f64 * w as f64)
        .sum()
}

/// `x` with element `index` (row-major) moved by `delta`.
pub fn nudged(x: &Tensor, index: usize, delta: f32) -> Tensor {
    let mut values = x.to_vec();
    values[index] += delta;
    Tensor::from_vec(values, x.sizes())
}

/// `(loss(x + h·e_i) − loss(x − h·e_i)) / 2h`, the loss evaluated in f64.
pub fn central_difference(
    x: &Tensor,
    index: usize,
    loss: impl Fn(&Tensor) -> f64,
) -> f64 {
    let up = loss(&nudged(x, index, STEP));
    let down = loss(&nudged(x, index, -STEP));
    (up - down) / (2.0 * STEP as f64)
}

/// Checks the analytic gradient `grad` of `loss` at `x` by central differences at a few
/// elements (all of them for small tensors), returning a description of the first
/// mismatch.
pub fn check_gradient(
    name: &str,
    x: &Tensor,
    grad: &Tensor,
    loss: impl Fn(&Tensor) -> f64,
) -> Result<(), String> {
    assert_eq!(x.sizes(), grad.sizes(), "{name}: gradient shape");
    let analytic = grad.to_vec();
    let stride = (analytic.len() / 12).max(1);
    for index in (0..analytic.len()).step_by(stride) {
        let numerical = central_difference(x, index, &loss);
        let a = analytic[index] as f64;
        if (numerical - a).abs() > ATOL + RTOL * a.abs() {
            return Err(format!(
                "{name}[{index}]: backward {a:e}, central differences {numerical:e}"
            ));
        }
    }
    Ok(())
}

/// The attention core's gradients of `q`, `k` and `v` against central differences, for the
/// loss `Σ r ∘ out` under the mask `hidden` and `dropout`; the generator is reset to
/// `noise_seed` before every forward pass, so each draws the same dropout noise.
pub fn check_attention_core(
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    hidden: &Tensor<bool>,
    r: &Tensor,
    dropout: &Dropout,
    noise_seed: u64,
) -> Result<(), String> {
    let loss = |q: &Tensor, k: &Tensor, v: &Tensor| {
        manual_seed(noise_seed);
        weighted_sum(&attention_forward(q, k, v, hidden, dropout).0, r)
    };
    manual_seed(noise_seed);
    let (_, tape) = attention_forward(q, k, v, hidden, dropout);
    let grads = attention_backward(&tape, r);
    check_gradient("queries", q, &grads.queries, |x| loss(x, k, v))?;
    check_gradient("keys", k, &grads.keys, |x| loss(q, x, v))?;
    check_gradient("values", v, &grads.values, |x| loss(q, k, x))
}
