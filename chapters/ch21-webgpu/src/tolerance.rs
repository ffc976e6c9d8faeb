//! How far a GPU's attention may lie from the CPU's, derived from the inputs.
//!
//! Neither result is exact: each rounds every product and sum to `f32`, in its own order,
//! and a GPU's `exp` is not the CPU's. WGSL promises `exp(x)` within `3 + 2|x|` units of
//! the last place (the CPU's is within 1 or 2), a division within 2.5 and `log(x)`
//! within `2⁻²¹`. So for each query row, from its own inputs, this module bounds how far
//! either result can be from the exact attention; the two lie within twice that of each
//! other. For a row with visible keys `j`, `u = 2⁻²⁴` and `γ(n) = n·u / (1 - n·u)`:
//!
//! - a score `q·kⱼ/√d` is off by at most `η = γ(d + 2)·maxⱼ Σ_c |q_c·k_jc| / √d`;
//! - so a weight `exp(sⱼ - max)` is off by a factor within `e^(±2η)`, its `exp` by
//!   `ε = (3 + 2R)·2u` more (`R`: the range of the row's scores), once for the weight and
//!   once for each time it is rescaled (kernel 3 rescales it once per later tile);
//! - the weights' relative error `a = e^(2η)(1 + ε)^(rescales + 1) - 1` moves the output by
//!   at most `2a·V` (`V`: the largest value the row sees), the sums of `n` terms add
//!   `γ(n)·V` each, the division `5u·V`, and weights below the smallest normal float, which
//!   a GPU may flush to zero, at most `n·2⁻¹²⁶·V`.

use crate::kernels::Kernel;
use crate::launch::{Inputs, Outputs};

/// The unit roundoff of `f32`: half the distance from 1 to the next float.
const U: f64 = f32::EPSILON as f64 / 2.0;

/// `γ(n) = n·u / (1 - n·u)`: the relative error of a sum or dot product of `n` terms.
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}

/// How many times `kernel` may rescale a weight over `keys` keys: kernel 3 once per later
/// tile of keys (so at most once per key), kernel 4 once when it merges the parts, the
/// others never.
pub fn rescales(kernel: Kernel, keys: usize) -> usize {
    match kernel {
        Kernel::Flash => keys,
        Kernel::SplitKv { .. } => 1,
        Kernel::Naive | Kernel::RowPerWorkgroup => 0,
    }
}

/// The largest distance two correct results may have, per query row.
#[derive(Clone, Debug, PartialEq)]
pub struct Tolerance {
    /// For each output element of the row, `[heads · queries]`.
    pub out: Vec<f64>,
    /// For the row's log-sum-exp, `[heads · queries]`.
    pub lse: Vec<f64>,
}

/// The tolerance of every row of attention over `inputs`, under the causal mask if
/// `causal`, for a kernel that rescales a weight up to `rescales` times.
///
/// # Shapes
/// As [`Inputs`]; returns one bound per row, `[heads · queries]`.
pub fn tolerance(inputs: &Inputs, causal: bool, rescales: usize) -> Tolerance {
    let shape = inputs.shape;
    let (d, d_v) = (shape.d, shape.d_v);
    let scale = 1.0 / (d as f64).sqrt();
    let mut tolerance = Tolerance {
        out: Vec::new(),
        lse: Vec::new(),
    };
    for h in 0..shape.heads {
        for i in 0..shape.queries {
            let visible = if causal {
                (i + 1).min(shape.keys)
            } else {
                shape.keys
            };
            let q = &inputs.q[(h * shape.queries + i) * d..][..d];
            let (mut magnitude, mut low, mut high, mut largest_value) =
                (0.0f64, f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
            for j in 0..visible {
                let k = &inputs.k[(h * shape.keys + j) * d..][..d];
                let v = &inputs.v[(h * shape.keys + j) * d_v..][..d_v];
                let dot: f64 = q
                    .iter()
                    .zip(k)
                    .map(|(&a, &b)| f64::from(a) * f64::from(b))
                    .sum();
                let size: f64 = q
                    .iter()
                    .zip(k)
                    .map(|(&a, &b)| (f64::from(a) * f64::from(b)).abs())
                    .sum();
                magnitude = magnitude.max(size * scale);
                low = low.min(dot * scale);
                high = high.max(dot * scale);
                largest_value = v
                    .iter()
                    .fold(largest_value, |m, &x| m.max(f64::from(x).abs()));
            }
            let eta = gamma(d + 2) * magnitude;
            let range = high - low + 2.0 * eta;
            let exp_error = (3.0 + 2.0 * range) * 2.0 * U;
            let a =
                (2.0 * eta).exp() * (1.0 + exp_error).powi(rescales as i32 + 1) - 1.0;
            let sums = gamma(visible);
            let flushed = visible as f64 * f64::from(f32::MIN_POSITIVE);
            let one_side =
                (2.0 * a + 2.0 * sums + 5.0 * U) / (1.0 - a - sums) + flushed;
            tolerance.out.push(2.0 * one_side * largest_value);
            // L = max + log(sum): the max is off by η, log(sum) by the sum's relative
            // error, plus log's own error (2⁻²¹ near 1, 3 units of the last place elsewhere),
            // plus the final addition's rounding.
            let lse = high + (visible as f64).ln();
            let log_error = 2f64.powi(-21) + 6.0 * U * (visible as f64).ln();
            let one_side = 2.0 * eta
                + (a + sums) / (1.0 - a - sums)
                + log_error
                + 2.0 * U * lse.abs();
            tolerance.lse.push(2.0 * one_side);
        }
    }
    tolerance
}

/// How a kernel's result compares with the CPU's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// The largest `|gpu - cpu|` of the outputs.
    pub largest_difference: f64,
    /// The largest `|gpu - cpu| / tolerance`, outputs and log-sum-exps alike: at most 1
    /// when they agree.
    pub worst_ratio: f64,
    /// Where the worst ratio is: `(row, feature)`, feature `None` for the log-sum-exp.
    pub worst_at: (usize, Option<usize>),
}

impl Agreement {
    /// Whether every output and log-sum-exp lies within its tolerance.
    pub fn within(&self) -> bool {
        self.worst_ratio <= 1.0
    }
}

/// Compares `gpu` with `cpu`, element by element, against `tolerance`.
///
/// # Shapes
/// `gpu.out`, `cpu.out`: `[rows, d_v]`; `gpu.lse`, `cpu.lse`: `[rows]`; `tolerance`:
/// `[rows]` each.
pub fn compare(gpu: &Outputs, cpu: &Outputs, tolerance: &Tolerance) -> Agreement {
    let rows = tolerance.out.len();
    let d_v = cpu.out.len() / rows.max(1);
    let mut agreement = Agreement {
        largest_difference: 0.0,
        worst_ratio: 0.0,
        worst_at: (0, None),
    };
    let mut check = |difference: f64, bound: f64, at: (usize, Option<usize>)| {
        // NaN (a kernel that divided by zero) never counts as agreeing.
        let ratio = if difference.is_nan() {
            f64::INFINITY
        } else {
            difference / bound
        };
        if ratio > agreement.worst_ratio || ratio.is_nan() {
            agreement.worst_ratio = ratio;
            agreement.worst_at = at;
        }
    };
    for row in 0..rows {
        for c in 0..d_v {
            let index = row * d_v + c;
            let difference =
                (f64::from(gpu.out[index]) - f64::from(cpu.out[index])).abs();
            check(difference, tolerance.out[row], (row, Some(c)));
            if difference > agreement.largest_difference || difference.is_nan() {
                agreement.largest_difference = difference;
            }
        }
        let difference = (f64::from(gpu.lse[row]) - f64::from(cpu.lse[row])).abs();
        check(difference, tolerance.lse[row], (row, None));
    }
    if gpu.out.len() != cpu.out.len() || gpu.lse.len() != cpu.lse.len() {
        agreement.worst_ratio = f64::INFINITY;
    }
    agreement
}
