//! The backward passes of [`crate::backward`] in PyTorch's order of roundings, beside the
//! formulas (see the appendix on matching PyTorch): each computes the same numbers, and
//! a test holds each to its formula within a few float32 steps.
//!
//! - LayerNorm: ATen's kernel, its row sums in 8 lanes, its products fused where the
//!   compiler fused them, the mean and the inverse deviation of the forward's own sums;
//! - GELU (tanh): ATen's kernel, SLEEF's `tanh` on whole blocks of two vectors (in vector
//!   lanes) and the C library's on the rest;
//! - RMSNorm: autograd's chain through the operations the formula is made of (`pow`,
//!   `mean`, `rsqrt`, two products), added up as autograd adds a tensor's uses;
//! - SiLU: ATen's kernel, with SLEEF's `exp` on whole blocks and the C library's on the
//!   rest.

use rayon::prelude::*;
use shared::exact::{
    Capability, capability, compiled_for_this_processor, expf_u10_branch_free,
    gelu_ranges, layer_norm_moments, silu_ranges, tanhf_u10_branch_free,
    zip_in_ranges,
};
use shared::nn::{LayerNorm, RMSNorm};
use shared::{Tensor, get_num_threads};

use crate::backward::NormGrads;
use crate::backward::gelu::{BETA, KAPPA};

/// Floats per vector in PyTorch's build for this processor's capability.
fn lanes() -> usize {
    if capability() == Capability::Avx512 {
        16
    } else {
        8
    }
}

/// `Σ p_j·q_j` over `0..n` as ATen's `map_reduce_all` adds it in 8 lanes: the first 8
/// products, then each further whole vector's products rounded and added, the last partial
/// vector's fused into its lanes, the lanes added as `((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7))`.
/// Fewer than 8 terms: the rounded products left to right.
#[inline(always)]
fn lane_reduce(n: usize, p: impl Fn(usize) -> f32, q: impl Fn(usize) -> f32) -> f32 {
    if n < 8 {
        return (1..n).fold(p(0) * q(0), |acc, j| acc + p(j) * q(j));
    }
    let mut acc: [f32; 8] = std::array::from_fn(|l| p(l) * q(l));
    let whole = n / 8 * 8;
    for j in 8..whole {
        acc[j % 8] += p(j) * q(j);
    }
    for j in whole..n {
        acc[j % 8] = p(j).mul_add(q(j), acc[j % 8]);
    }
    ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

/// [`layer_norm_backward`](crate::backward::layer_norm::layer_norm_backward) as ATen's
/// kernel computes it, row by row; the weight's gradient summed over blocks of rows, one
/// per thread, each from 0, then the blocks in order. The rows, and the weight's blocks,
/// are shared between the pool's threads, each compiled with fused multiply-adds: every
/// number is computed by the same steps wherever it runs.
///
/// # Shapes
/// As the formula.
pub fn layer_norm_backward_in_pytorch_order(
    norm: &LayerNorm,
    x: &Tensor,
    grad_y: &Tensor,
) -> NormGrads {
    let w = norm
        .weight
        .as_ref()
        .expect("a LayerNorm with a weight")
        .to_vec();
    let d = w.len();
    let (xs, gs) = (x.to_vec(), grad_y.to_vec());
    let eps = norm.eps as f32;
    let scale = 1.0 / d as f32;
    let rows = xs.len() / d;
    let mut grad_x = vec![0.0f32; xs.len()];
    let mut moments = vec![(0.0f32, 0.0f32); rows];
    let row_block = rows.div_ceil(rayon::current_num_threads()).max(1);
    let blocks = grad_x
        .par_chunks_mut(row_block * d)
        .zip(moments.par_chunks_mut(row_block));
    blocks.enumerate().for_each(|(i, (grad_x, moments))| {
        let rows = i * row_block * d..;
        let (xs, gs) = (&xs[rows.clone()], &gs[rows]);
        compiled_for_this_processor(
            #[inline(always)]
            || {
                let each = xs.chunks(d).zip(gs.chunks(d)).zip(grad_x.chunks_mut(d));
                for (((xr, gr), out), moment) in each.zip(moments) {
                    let (mean, var) = layer_norm_moments(xr);
                    let a = 1.0 / (var + eps).sqrt();
                    *moment = (mean, a);
                    let ds = lane_reduce(d, |j| gr[j] * xr[j], |j| w[j]);
                    let db = lane_reduce(d, |j| gr[j], |j| w[j]);
                    let b = (((db.mul_add(mean, -ds) * a) * a) * a) * scale;
                    let c = (-b).mul_add(mean, -((db * a) * scale));
                    for j in 0..d {
                        out[j] = b.mul_add(xr[j], (a * gr[j]) * w[j]) + c;
                    }
                }
            },
        )
    });
    // The weight: rows in one block per thread, each block's column sums from 0, then
    // the blocks added in order.
    let per_block = rows.div_ceil(get_num_threads().max(1)).max(1);
    let block_sums: Vec<Vec<f32>> = (0..rows.div_ceil(per_block))
        .into_par_iter()
        .map(|block| {
            let rows = block * per_block..((block + 1) * per_block).min(rows);
            compiled_for_this_processor(
                #[inline(always)]
                || {
                    let mut sums = vec![0.0f32; d];
                    for row in rows {
                        let (mean, a) = moments[row];
                        for (j, sum) in sums.iter_mut().enumerate() {
                            let n = a.mul_add(xs[row * d + j], -(a * mean));
                            *sum = gs[row * d + j].mul_add(n, *sum);
                        }
                    }
                    sums
                },
            )
        })
        .collect();
    let mut grad_w = vec![0.0f32; d];
    for sums in block_sums {
        for (total, sum) in grad_w.iter_mut().zip(sums) {
            *total += sum;
        }
    }
    NormGrads {
        input: Tensor::from_vec(grad_x, x.sizes()),
        weight: Tensor::from_vec(grad_w, &[d]),
    }
}

/// `f32(3·κ)`, the constant of ATen's GELU backward.
const KAPPA3: f32 = 0.134_144_99;

/// The tanh GELU's slope at `x` as ATen's backward computes it, with the `tanh` given.
/// Always inlined, so that the loop of whole vectors runs it in vector lanes.
#[inline(always)]
fn gelu_slope(x: f32, tanh: impl Fn(f32) -> f32) -> f32 {
    let x_sq = x * x;
    let inner = BETA * KAPPA.mul_add(x_sq * x, x);
    let t = tanh(inner);
    let left_d = 0.5 * (1.0 + t);
    let tanh_d = (-t).mul_add(t, 1.0);
    let inner_d = BETA * KAPPA3.mul_add(x_sq, 1.0);
    left_d + ((0.5 * x) * tanh_d) * inner_d
}

/// [`gelu_backward`](crate::backward::gelu::gelu_backward) as ATen's kernel computes it.
///
/// # Shapes
/// As the formula.
pub fn gelu_backward_in_pytorch_order(x: &Tensor, grad_y: &Tensor) -> Tensor {
    let (xs, gs) = (x.to_vec(), grad_y.to_vec());
    let ranges = gelu_ranges(xs.len(), get_num_threads());
    let out = zip_in_ranges(
        &xs,
        &gs,
        &ranges,
        2 * lanes(),
        // Compiled into the loop of whole vectors, to run in its lanes.
        #[inline(always)]
        |x, g| g * gelu_slope(x, tanhf_u10_branch_free),
        |x, g| g * gelu_slope(x, f32::tanh),
    );
    Tensor::from_vec(out, x.sizes())
}

/// SiLU's slope times `g` as ATen's backward computes it, with the `exp` given (inlined
/// into the vector loop, as [`gelu_slope`]).
#[inline(always)]
fn silu_grad(g: f32, x: f32, exp: impl Fn(f32) -> f32) -> f32 {
    let s = 1.0 / (1.0 + exp(-x));
    (g * s) * x.mul_add(1.0 - s, 1.0)
}

/// [`silu_backward`](crate::backward::silu::silu_backward) as ATen's kernel computes it.
///
/// # Shapes
/// As the formula.
pub fn silu_backward_in_pytorch_order(x: &Tensor, grad_y: &Tensor) -> Tensor {
    let (xs, gs) = (x.to_vec(), grad_y.to_vec());
    let ranges = silu_ranges(xs.len(), get_num_threads());
    let out = zip_in_ranges(
        &xs,
        &gs,
        &ranges,
        2 * lanes(),
        // Compiled into the loop of whole vectors, to run in its lanes.
        #[inline(always)]
        |x, g| silu_grad(g, x, expf_u10_branch_free),
        |x, g| silu_grad(g, x, f32::exp),
    );
    Tensor::from_vec(out, x.sizes())
}

/// [`rms_norm_backward`](crate::backward::rms_norm::rms_norm_backward) through the
/// operations of `x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w`, each backward
/// as autograd computes it, and the input's three gradients added as autograd adds them:
/// the residual connection's first (its addition was made last in the forward pass), then
/// the product `x·r`'s, then the path through the mean square.
///
/// # Shapes
/// As the formula; `grad_stream` the shape of `x`.
pub fn rms_norm_backward_in_pytorch_order(
    norm: &RMSNorm,
    x: &Tensor,
    grad_y: &Tensor,
    grad_stream: Option<&Tensor>,
) -> NormGrads {
    let w = norm.weight.as_ref().expect("an RMSNorm with a weight");
    let eps = norm.eps.map_or(f32::EPSILON, |e| e as f32);
    let r = (x.pow(2.0).mean_dim(-1, true) + eps).pow(-0.5);
    let x_hat = x * &r;
    // y = x̂ · w
    let weight = (grad_y * &x_hat).flatten(0, -2).sum_dim(0, false);
    let grad_x_hat = grad_y * w;
    // x̂ = x · r
    let direct = &grad_x_hat * &r;
    let grad_r = (&grad_x_hat * x).sum_dim(-1, true);
    // r = rsqrt(m + eps): dr/dm = −½·r³
    let grad_m = (&grad_r * -0.5) * &r.pow(3.0);
    // m = mean(x²): each x² gets 1/d of it, and dx²/dx = 2x
    let through_mean = &(&grad_m / x.size(-1) as f32) * &(x * 2.0);
    let input = match grad_stream {
        Some(stream) => &(stream + &direct) + &through_mean,
        None => &direct + &through_mean,
    };
    NormGrads { input, weight }
}

/// Vector lanes of `torch.linalg.vector_norm`'s kernel.
const NORM_LANES: usize = 8;

/// `‖v‖₂` as `torch.linalg.vector_norm(v)` adds it (measured): the squares of whole
/// vectors of `NORM_LANES` rounded and added into their lanes, the lanes added in
/// order, then the rest: four squares rounded and added one by one if at least four are
/// left, the last ones fused into the sum; the square root.
///
/// # Shapes
/// `values`: any length.
pub fn vector_norm_in_pytorch_order(values: &[f32]) -> f32 {
    let whole = values.len() / NORM_LANES * NORM_LANES;
    let mut lanes = [0.0f32; NORM_LANES];
    for (j, &x) in values[..whole].iter().enumerate() {
        lanes[j % NORM_LANES] += x * x;
    }
    let mut total = lanes[1..].iter().fold(lanes[0], |acc, &l| acc + l);
    let rest = &values[whole..];
    let quarter = if rest.len() >= 4 { 4 } else { 0 };
    for &x in &rest[..quarter] {
        total += x * x;
    }
    for &x in &rest[quarter..] {
        total = x.mul_add(x, total);
    }
    total.sqrt()
}

/// [`clip_grad_norm`](crate::clip::clip_grad_norm) as `torch.nn.utils.clip_grad_norm_`
/// computes it: the norm of every gradient, the norm of those norms, the factor
/// `max_norm · (1 / (norm + 1e-6))` capped at 1, and every gradient multiplied by it
/// (by 1 when the norm is small enough, which changes nothing).
///
/// # Shapes
/// `grads`: any shapes.
pub fn clip_grad_norm_in_pytorch_order(grads: &mut [Tensor], max_norm: f32) -> f32 {
    let norms: Vec<f32> = grads
        .iter()
        .map(|g| vector_norm_in_pytorch_order(&g.to_vec()))
        .collect();
    let total = vector_norm_in_pytorch_order(&norms);
    let coef = ((1.0 / (total + 1e-6)) * max_norm).min(1.0);
    for g in grads.iter_mut() {
        *g = &*g * coef;
    }
    total
}
