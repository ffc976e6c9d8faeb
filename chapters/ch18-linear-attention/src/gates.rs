//! The inputs of Gated DeltaNet: unit-length queries and keys, a write strength and a decay.
//!
//! The open models (Qwen3-Next, Qwen3.5) divide every query and key row by its length, so
//! that `k kᵀ` is a projection and `I − β k kᵀ` never grows the state. The write strength
//! `β_t = sigmoid(·)` lies in (0, 1); the decay `α_t = sigmoid(·)` too, and the chunked form
//! works with its logarithm, `g_t = log α_t`, whose running sums give the decay between any
//! two tokens of a chunk: `α_{j+1} ⋯ α_i = exp(G_i − G_j)`. Each gate is computed in float64
//! and rounded once to float32, as chapter 15's sigmoid.

use shared::Tensor;

/// Every row divided by its length: `x / sqrt(Σ x²)`.
///
/// # Shapes
/// `x`: `[.., d]`. Returns the same shape.
// ANCHOR: l2_normalize
pub fn l2_normalize(x: &Tensor) -> Tensor {
    x / (x * x).sum_dim(-1, true).sqrt()
}
// ANCHOR_END: l2_normalize

/// `log sigmoid(x) = min(x, 0) − log(1 + e^(−|x|))`, elementwise, in float64 rounded once.
///
/// # Shapes
/// Any shape; unchanged.
pub fn log_sigmoid(x: &Tensor) -> Tensor {
    map_f64(x, |x| x.min(0.0) - (-x.abs()).exp().ln_1p())
}

/// `SiLU(x) = x · sigmoid(x) = x / (1 + e^(−x))`, elementwise, in float64 rounded once.
///
/// # Shapes
/// Any shape; unchanged.
pub fn silu(x: &Tensor) -> Tensor {
    map_f64(x, |x| x / (1.0 + (-x).exp()))
}

/// `e^x`, elementwise, in float64 rounded once.
///
/// # Shapes
/// Any shape; unchanged.
pub fn exp(x: &Tensor) -> Tensor {
    map_f64(x, f64::exp)
}

/// The running sums `G_i = g_0 + ⋯ + g_i`, added in float64 and each rounded once to
/// float32, as `torch.cumsum` adds float32 numbers.
///
/// # Shapes
/// `g`: `[n]`. Returns `[n]`.
pub fn cumsum(g: &Tensor) -> Tensor {
    let mut total = 0.0f64;
    let sums = g
        .to_vec()
        .into_iter()
        .map(|x| {
            total += x as f64;
            total as f32
        })
        .collect();
    Tensor::from_vec(sums, g.sizes())
}

fn map_f64(x: &Tensor, f: impl Fn(f64) -> f64) -> Tensor {
    let values = x.to_vec().into_iter().map(|x| f(x as f64) as f32).collect();
    Tensor::from_vec(values, x.sizes())
}
