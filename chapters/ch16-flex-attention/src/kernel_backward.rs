//! The tiled kernel's backward: chapter 9's FlashAttention backward (Dao, 2023,
//! "FlashAttention-2", Algorithm 2), generic over a score_mod and its backward, steered by
//! the block mask.
//!
//! It keeps no `queries × keys` matrix. For every query it needs two numbers from the
//! forward: the log-sum-exp `L` of its modified scores, from which any weight is rebuilt
//! as `P = exp(score_mod(S) − L)`, and `D = rowsum(dO ∘ O)`, which equals the dot product
//! `rowsum(dP ∘ P)` of softmax's backward. Then, tile by tile, skipping the empty tiles and
//! asking the mask_mod only on the partial ones:
//!
//! ```text
//! S  = q·kᵀ·scale     P = exp(score_mod(S) − L)       (hidden entries: P = 0)
//! dV += Pᵀ·dO         dP = dO·vᵀ
//! dM = P ∘ (dP − D)   dS = score_mod_grad(dM, S) · scale
//! dQ += dS·k          dK += dSᵀ·q
//! ```
//!
//! Query head `h` adds its `dK` and `dV` straight into key/value head `h / groups`, so
//! the sum over the query heads of a group needs no extra step.

use ch09_flash_attention::online::OnlineSoftmax;
use shared::{Result, Tensor};

use crate::backward::{FlexGrads, ScoreModGrad, check_grad_out};
use crate::block_mask::{BlockMask, TileVisit};
use crate::formula::check_shapes;
use crate::kernel::{Visits, check_block_mask, dot, flex_kernel};
use crate::kv_rows::elements;
use crate::recipes::{MaskMod, ScoreMod};

/// The gradients of [`flex_kernel`]'s `q`, `k`, `v` for the output gradient `grad_out`,
/// tile by tile, and how many tiles the backward loop computed (the forward pass it runs
/// again first is not counted). The block mask must come from the same `mask_mod`.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `grad_out`: `[batch, heads, queries, d_v]`; the block
/// mask for `queries × keys`. Returns the shapes of `q`, `k`, `v`.
#[allow(clippy::too_many_arguments)] // the inputs, the block mask and three functions
pub fn flex_kernel_backward(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    grad_out: &Tensor,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod + Clone,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod + Clone,
) -> Result<(FlexGrads, Visits)> {
    let op = "flex_kernel_backward";
    check_shapes(op, q, k, v)?;
    check_grad_out(op, q, v, grad_out)?;
    let [batch, heads, queries, _] = q.dims();
    check_block_mask(op, block_mask, [batch, heads, queries, k.size(2)])?;
    // The forward again: the output and every query's log-sum-exp.
    let (out, _) =
        flex_kernel(q, k, v, block_mask, score_mod.clone(), mask_mod.clone())?;
    let lse = log_sum_exp(q, k, block_mask, score_mod.clone(), mask_mod.clone());
    let lse = Tensor::from_vec(lse, &[batch, heads, queries]);
    let forward = [&out, &lse];
    flex_kernel_backward_given(
        [q, k, v],
        forward,
        grad_out,
        block_mask,
        score_mod,
        score_mod_grad,
        mask_mod,
    )
}

/// [`flex_kernel_backward`] for an output `out` and log-sum-exps `lse` the caller already
/// has. They may come from more keys than `k` and `v` hold (chapter 24's ring, whose
/// queries meet the keys one block at a time): each weight is rebuilt against the whole
/// softmax's `L`, and `D = rowsum(dO ∘ O)` is the whole output's, so the gradients are
/// this block's share of the whole attention's.
///
/// # Shapes
/// `q`, `k`, `v`, `grad_out` and the block mask as for [`flex_kernel_backward`]; `out`:
/// `[batch, heads, queries, d_v]`, `lse`: `[batch, heads, queries]`. Returns the shapes of
/// `q`, `k`, `v`.
pub fn flex_kernel_backward_given(
    [q, k, v]: [&Tensor; 3],
    [out, lse]: [&Tensor; 2],
    grad_out: &Tensor,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod + Clone,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod + Clone,
) -> Result<(FlexGrads, Visits)> {
    let op = "flex_kernel_backward";
    let groups = check_shapes(op, q, k, v)?;
    check_grad_out(op, q, v, grad_out)?;
    check_grad_out(op, q, v, out)?;
    let [batch, heads, queries, d] = q.dims();
    let [_, kv_heads, keys, d_v] = v.dims();
    check_block_mask(op, block_mask, [batch, heads, queries, keys])?;
    if lse.sizes() != [batch, heads, queries] {
        return Err(shared::Error::Shape {
            op,
            detail: format!(
                "expected lse [{batch}, {heads}, {queries}], got {:?}",
                lse.sizes()
            ),
        });
    }
    let lse = lse.to_vec();
    let (q, k, v) = (q.contiguous(), k.contiguous(), v.contiguous());
    let (out, grad_out) = (out.contiguous(), grad_out.contiguous());
    let (q, k, v) = (elements(&q), elements(&k), elements(&v));
    let (out, grad_out) = (elements(&out), elements(&grad_out));
    // D = rowsum(dO ∘ O), one number per query.
    let delta: Vec<f32> = grad_out
        .chunks(d_v.max(1))
        .zip(out.chunks(d_v.max(1)))
        .map(|(g, o)| dot(g, o))
        .collect();
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile;
    let mut grad_q = vec![0.0f32; q.len()];
    let mut grad_k = vec![0.0f32; k.len()];
    let mut grad_v = vec![0.0f32; v.len()];
    let mut visits = Visits::default();
    for b in 0..batch {
        for h in 0..heads {
            let row0 = (b * heads + h) * queries; // this head's first query
            let key0 = (b * kv_heads + h / groups) * keys; // its key/value head's first key
            for qt in 0..block_mask.q_tiles() {
                for visit in block_mask.visit(b, h, qt) {
                    visits.record(&visit);
                    let TileVisit {
                        keys: cols, masked, ..
                    } = visit;
                    for i in qt * tile..((qt + 1) * tile).min(queries) {
                        let qi = row0 + i;
                        if lse[qi] == f32::NEG_INFINITY {
                            continue; // query i sees no key at all
                        }
                        let q_row = &q[qi * d..][..d];
                        let g_row = &grad_out[qi * d_v..][..d_v];
                        for j in cols.clone() {
                            if masked && !mask_mod(b, h, i, j) {
                                continue; // P = 0: nothing flows through a hidden entry
                            }
                            let kj = key0 + j;
                            let (k_row, v_row) =
                                (&k[kj * d..][..d], &v[kj * d_v..][..d_v]);
                            let score = dot(q_row, k_row) * scale;
                            let p = (score_mod(score, b, h, i, j) - lse[qi]).exp();
                            for (gv, g) in
                                grad_v[kj * d_v..][..d_v].iter_mut().zip(g_row)
                            {
                                *gv += p * g;
                            }
                            let grad_p = dot(g_row, v_row);
                            let grad_modified = p * (grad_p - delta[qi]);
                            let grad_score =
                                score_mod_grad(grad_modified, score, b, h, i, j)
                                    * scale;
                            for (gq, x) in grad_q[qi * d..][..d].iter_mut().zip(k_row)
                            {
                                *gq += grad_score * x;
                            }
                            for (gk, x) in grad_k[kj * d..][..d].iter_mut().zip(q_row)
                            {
                                *gk += grad_score * x;
                            }
                        }
                    }
                }
            }
        }
    }
    let grads = FlexGrads {
        q: Tensor::from_vec(grad_q, &[batch, heads, queries, d]),
        k: Tensor::from_vec(grad_k, &[batch, kv_heads, keys, d]),
        v: Tensor::from_vec(grad_v, &[batch, kv_heads, keys, d_v]),
    };
    Ok((grads, visits))
}

/// Every query's log-sum-exp of its visible modified scores, `max + ln Σ exp(s − max)`
/// from chapter 9's online softmax over the tiles that are not empty; `-∞` for a query
/// that sees no key.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]` (contiguous or
/// not). Returns `batch · heads · queries` numbers.
fn log_sum_exp(
    q: &Tensor,
    k: &Tensor,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Vec<f32> {
    let [batch, heads, queries, d] = q.dims();
    let [_, kv_heads, keys, _] = k.dims();
    let groups = heads / kv_heads;
    let (q, k) = (q.contiguous(), k.contiguous());
    let (q, k) = (elements(&q), elements(&k));
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile;
    let mut lse = Vec::with_capacity(batch * heads * queries);
    for b in 0..batch {
        for h in 0..heads {
            let key0 = (b * kv_heads + h / groups) * keys;
            for i in 0..queries {
                let q_row = &q[((b * heads + h) * queries + i) * d..][..d];
                let mut state = OnlineSoftmax::new();
                for visit in block_mask.visit(b, h, i / tile) {
                    let TileVisit {
                        keys: cols, masked, ..
                    } = visit;
                    let mut scores: Vec<f32> = cols
                        .filter(|&j| !masked || mask_mod(b, h, i, j))
                        .map(|j| {
                            let score = dot(q_row, &k[(key0 + j) * d..][..d]) * scale;
                            score_mod(score, b, h, i, j)
                        })
                        .collect();
                    if !scores.is_empty() {
                        state.update(&mut scores);
                    }
                }
                lse.push(if state.sum > 0.0 {
                    state.max + state.sum.ln()
                } else {
                    f32::NEG_INFINITY
                });
            }
        }
    }
    lse
}
