//! What the paged-attention and split-KV tests share: a pool whose blocks are scattered
//! at random, the exact attention in `f64`, and how far from it the kernel and the merge
//! of its parts may be, derived from the inputs.
//!
//! The kernel's bound, per query row, with `u = 2⁻²⁴`, `γ(n) = n·u / (1 − n·u)`, the row's
//! `n` keys in `T` tiles and its exact scores `sⱼ`:
//!
//! - a score `q·kⱼ·scale` (`d` products added, the scale rounded, the product rounded)
//!   is off by at most `η = γ(d + 2)·maxⱼ Σ_c |q_c·k_jc|·scale`, so a softmax weight by a
//!   factor within `e^(±2η)`;
//! - chapter 9's `exp` is within 2 units of the last place (`4u` relative) of the exact
//!   value of its rounded argument `s − max`, which is off by `u·(R + 2η)` (`R`: the range
//!   of the row's scores); a weight goes through one `exp` and is rescaled at most `T − 1`
//!   times, each rescale one more `exp` and one product: its relative error is at most
//!   `a = e^(2η)·(1 + 4u + u·(R + 2η))^T·(1 + u)^T − 1`;
//! - the weighted sum of values and the sum of weights add `n` terms: `γ(n + 1)` each;
//! - the output `N / D` then lies within `(2a + 2γ(n + 1) + u) / (1 − a − γ(n + 1))·W` of
//!   the exact one, `W = max_c Σⱼ pⱼ·|v_jc|` (`pⱼ` the exact weights), plus
//!   `n·2⁻¹²⁶·maxⱼ|v_jc|` for weights too small for a normal float;
//! - the log-sum-exp `max + ln(sum)`: within `η` from the scores, `−ln(1 − β)` from the
//!   sum's relative error `β = (1 + a₀)(1 + γ(n)) − 1` (`a₀`: `a` without the scores'
//!   `e^(2η)`), `2u·(ln n + 1)` from `ln` and `u·(|L| + 1)` from the addition.

#![allow(dead_code)] // each test file uses part of this module

use std::ops::Range;

use shared::{Tensor, randn};

use ch17_inference::paged::{Block, BlockPool, Sequence};
use ch17_inference::split_kv::Part;

/// The unit roundoff of `f32`.
pub const U: f64 = f32::EPSILON as f64 / 2.0;

/// `γ(n) = n·u / (1 − n·u)`: the relative error of a sum of `n` terms.
pub fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}

/// Layers of the test pools.
pub const LAYERS: usize = 2;

/// A pool of `n_blocks` blocks of `block_size` tokens holding one sequence of `tokens`
/// tokens, its logical block `i` in physical block `physical[i]`, random keys
/// `[batch, kv_heads, 1, d]` and values `[batch, kv_heads, 1, d_v]` in every layer.
pub fn scattered_pool(
    [batch, kv_heads, tokens, d, d_v]: [usize; 5],
    block_size: usize,
    n_blocks: usize,
    physical: &[usize],
) -> (BlockPool, Sequence) {
    let mut pool = BlockPool::new(n_blocks, block_size, LAYERS).unwrap();
    let mut seq = Sequence::default();
    for (logical, positions) in (0..tokens)
        .collect::<Vec<_>>()
        .chunks(block_size)
        .enumerate()
    {
        let id = physical[logical];
        let mut block = Block {
            refs: 1,
            slots: vec![Vec::new(); LAYERS],
            ..Block::default()
        };
        for &t in positions {
            block.tokens.push(t as i64);
            for layer in &mut block.slots {
                layer.push((
                    randn(&[batch, kv_heads, 1, d]),
                    randn(&[batch, kv_heads, 1, d_v]),
                ));
            }
        }
        pool.blocks[id] = block;
        seq.table.push(id);
    }
    seq.tokens = (0..tokens as i64).collect();
    (pool, seq)
}

/// Attention of one row in `f64`, and the quantities its bounds need.
struct Row {
    /// `Σⱼ pⱼ·vⱼ`, `d_v` numbers.
    out: Vec<f64>,
    /// `log Σⱼ exp(sⱼ)`.
    lse: f64,
    /// `η`: how far a computed score may be from the exact one.
    eta: f64,
    /// The range of the scores.
    range: f64,
    /// `max_c Σⱼ pⱼ·|v_jc|`.
    weighted: f64,
    /// `maxⱼ,c |v_jc|`.
    largest_value: f64,
}

/// The exact attention of every query row over keys `keys`, `[batch, heads, queries]`
/// rows in order.
fn rows(q: &Tensor, k: &Tensor, v: &Tensor, keys: Range<usize>) -> Vec<Row> {
    let [batch, heads, queries, d] = q.dims();
    let [_, kv_heads, tokens, d_v] = v.dims();
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let scale = 1.0 / (d as f64).sqrt();
    let mut rows = Vec::new();
    for b in 0..batch {
        for h in 0..heads {
            let kv = b * kv_heads + h / (heads / kv_heads);
            for i in 0..queries {
                let q = &q[((b * heads + h) * queries + i) * d..][..d];
                let key = |j: usize| &k[(kv * tokens + j) * d..][..d];
                let value = |j: usize| &v[(kv * tokens + j) * d_v..][..d_v];
                let scores: Vec<f64> = keys
                    .clone()
                    .map(|j| {
                        q.iter()
                            .zip(key(j))
                            .map(|(&a, &b)| f64::from(a) * f64::from(b))
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let magnitude = keys
                    .clone()
                    .map(|j| {
                        q.iter()
                            .zip(key(j))
                            .map(|(&a, &b)| (f64::from(a) * f64::from(b)).abs())
                            .sum::<f64>()
                            * scale
                    })
                    .fold(0.0, f64::max);
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
                let weights: Vec<f64> =
                    scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f64 = weights.iter().sum();
                let mut out = vec![0.0; d_v];
                let mut absolute = vec![0.0f64; d_v];
                let mut largest_value = 0.0f64;
                for (w, j) in weights.iter().zip(keys.clone()) {
                    for c in 0..d_v {
                        let x = f64::from(value(j)[c]);
                        out[c] += w / sum * x;
                        absolute[c] += w / sum * x.abs();
                        largest_value = largest_value.max(x.abs());
                    }
                }
                rows.push(Row {
                    out,
                    lse: max + sum.ln(),
                    eta: gamma(d + 2) * magnitude,
                    range: max - min,
                    weighted: absolute.iter().copied().fold(0.0, f64::max),
                    largest_value,
                });
            }
        }
    }
    rows
}

/// The exact attention over keys `keys` (`[batch, heads, queries, d_v]` and
/// `[batch, heads, queries]`, flattened), with the kernel's bounds for tiles of `tile`:
/// `(out, lse, out bound per row, lse bound per row)`.
pub fn exact_and_bounds(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    keys: Range<usize>,
    tile: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = keys.len();
    let tiles = n.div_ceil(tile) as i32;
    let (mut out, mut lse, mut out_bound, mut lse_bound) =
        (vec![], vec![], vec![], vec![]);
    for row in rows(q, k, v, keys) {
        let exp_error = 4.0 * U + U * (row.range + 2.0 * row.eta);
        let rounding = (1.0 + exp_error).powi(tiles) * (1.0 + U).powi(tiles) - 1.0;
        let a = (2.0 * row.eta).exp() * (1.0 + rounding) - 1.0;
        let sums = gamma(n + 1);
        let flushed = n as f64 * f64::from(f32::MIN_POSITIVE) * row.largest_value;
        out_bound.push(
            (2.0 * a + 2.0 * sums + U) / (1.0 - a - sums) * row.weighted + flushed,
        );
        let beta = (1.0 + rounding) * (1.0 + gamma(n)) - 1.0;
        lse_bound.push(
            row.eta - (1.0 - beta).ln()
                + 2.0 * U * ((n as f64).ln() + 1.0)
                + U * (row.lse.abs() + 1.0),
        );
        out.extend(row.out);
        lse.push(row.lse);
    }
    (out, lse, out_bound, lse_bound)
}

/// The bounds of the merge of `parts`, each within `out_bounds[p]` and `lse_bounds[p]`
/// (per row) of its exact attention: `(out bound per row, lse bound per row)`.
///
/// With `P` parts, `M` the largest computed `L_p` and `Δ` the largest `M − L_p`: the sum
/// `Σₚ exp(L_p − M)` is off by `ε = (1 + 2u + u·Δ)(1 + γ(P)) − 1` (Rust's `exp` within one
/// unit of the last place), so the merged `L` lies within
/// `λ = maxₚ λₚ − ln(1 − ε) + 2u·(ln P + 1) + u·(|L| + 1)` of the exact one; a share
/// `exp(L_p − L)` within a factor `1 + θ`, `θ = e^(λₚ + λ + u·|L_p − L|)·(1 + 2u) − 1`;
/// and the output within `maxₚ tₚ + (θ + γ(P + 1)(1 + θ))·maxₚ |O_p|`.
pub fn merge_bounds(
    parts: &[Part],
    out_bounds: &[Vec<f64>],
    lse_bounds: &[Vec<f64>],
) -> (Vec<f64>, Vec<f64>) {
    let n_parts = parts.len();
    let lses: Vec<Vec<f32>> = parts.iter().map(|p| p.lse.to_vec()).collect();
    let outs: Vec<Vec<f32>> = parts.iter().map(|p| p.out.to_vec()).collect();
    let rows = lses[0].len();
    let d_v = outs[0].len() / rows;
    let (mut out_bound, mut lse_bound) = (vec![], vec![]);
    for row in 0..rows {
        let part_lse: Vec<f64> = lses.iter().map(|l| f64::from(l[row])).collect();
        let max = part_lse.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread = part_lse.iter().map(|l| max - l).fold(0.0, f64::max);
        let merged = max + part_lse.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
        let epsilon = (1.0 + 2.0 * U + U * spread) * (1.0 + gamma(n_parts)) - 1.0;
        let largest_lambda = lse_bounds.iter().map(|b| b[row]).fold(0.0, f64::max);
        let lambda = largest_lambda - (1.0 - epsilon).ln()
            + 2.0 * U * ((n_parts as f64).ln() + 1.0)
            + U * (merged.abs() + 1.0);
        let theta = (0..n_parts)
            .map(|p| {
                (lse_bounds[p][row] + lambda + U * (part_lse[p] - merged).abs()).exp()
                    * (1.0 + 2.0 * U)
                    - 1.0
            })
            .fold(0.0, f64::max);
        let largest_out = outs
            .iter()
            .flat_map(|o| &o[row * d_v..][..d_v])
            .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
        let largest_t = out_bounds.iter().map(|b| b[row]).fold(0.0, f64::max);
        out_bound.push(
            largest_t + (theta + gamma(n_parts + 1) * (1.0 + theta)) * largest_out,
        );
        lse_bound.push(lambda);
    }
    (out_bound, lse_bound)
}

/// The largest `|got − exact| / bound` over every element (at most 1 when within), with
/// the row, the values and the bound where it is, for the failure message.
pub fn worst(got: &Tensor, exact: &[f64], bound: &[f64]) -> (f64, String) {
    let got = got.to_vec();
    let per_row = got.len() / bound.len();
    let mut worst = (0.0f64, String::new());
    for (index, (&g, &e)) in got.iter().zip(exact).enumerate() {
        let row = index / per_row;
        let difference = (f64::from(g) - e).abs();
        let ratio = if difference.is_nan() {
            f64::INFINITY
        } else {
            difference / bound[row]
        };
        if ratio > worst.0 || worst.1.is_empty() {
            worst = (
                ratio,
                format!(
                    "row {row}: got {g}, exact {e}, difference {difference:e}, bound {:e}",
                    bound[row]
                ),
            );
        }
    }
    worst
}
