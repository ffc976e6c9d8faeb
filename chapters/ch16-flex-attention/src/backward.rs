//! The backward pass through a score_mod: the gradients of `q`, `k` and `v` from the
//! gradient of the output, for training with any recipe whose score_mod has a derivative.
//!
//! It is chapter 10's attention backward with one more step. Going back through
//! `out = softmax(mask(score_mod(q·kᵀ·scale)))·v`:
//!
//! ```text
//! grad_weights, grad_v = matmul_backward(weights, v, grad_out)
//! grad_modified = softmax_backward(weights, grad_weights)   [batch, heads, queries, keys]
//! grad_modified = 0 where !mask_mod(...)                     a filled -∞ is a constant
//! grad_scores   = grad_modified · ∂score_mod/∂score          the new step, entry by entry
//! grad_q, grad_kᵀ = matmul_backward(q, kᵀ, grad_scores · scale)
//! ```
//!
//! The derivative is 1 for the masks (they do not touch a visible score) and for ALiBi
//! (its bias does not depend on the score); for the softcap `cap · tanh(s / cap)` it is
//! `1 − tanh²(s / cap)`, close to 0 for the scores the cap flattens. With grouped-query
//! attention a key/value head was repeated for the query heads that read it, so its
//! gradient is the sum of theirs.
//!
//! The softcap's backward is an exercise (module [`crate::softcap_grad`]).

use ch10_backward::matmul::matmul_backward;
use ch10_backward::pointwise::masked_fill_backward;
use ch10_backward::softmax::softmax_backward;
use shared::{Error, Result, Tensor};

use ch07_multihead_split::grouped::repeat_kv;

use crate::formula::{check_shapes, hidden, modified};
use crate::recipes::{MaskMod, ScoreMod};

/// A score_mod's backward: from the gradient `grad` of the modified score and the score
/// `score` before it, with the same indices, the gradient of the score
/// (`grad · ∂score_mod/∂score`, the chain rule).
pub trait ScoreModGrad: Fn(f32, f32, usize, usize, usize, usize) -> f32 {}
impl<F: Fn(f32, f32, usize, usize, usize, usize) -> f32> ScoreModGrad for F {}

/// The backward of [`unchanged`](crate::recipes::unchanged) and of every score_mod that
/// adds something not depending on the score, such as ALiBi's bias: the derivative is 1.
///
/// # Shapes
/// One gradient, one score and its indices; returns one gradient.
pub fn unchanged_grad(
    grad: f32,
    _score: f32,
    _b: usize,
    _h: usize,
    _q: usize,
    _kv: usize,
) -> f32 {
    grad
}

/// The gradients of `q`, `k` and `v`, in their shapes.
#[derive(Debug, Clone)]
pub struct FlexGrads {
    /// `[batch, heads, queries, d]`.
    pub q: Tensor,
    /// `[batch, kv_heads, keys, d]`.
    pub k: Tensor,
    /// `[batch, kv_heads, keys, d_v]`.
    pub v: Tensor,
}

/// Checks `grad_out` against the output's shape `[batch, heads, queries, d_v]` for `op`.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `v`: `[batch, kv_heads, keys, d_v]`, `grad_out`:
/// `[batch, heads, queries, d_v]`.
pub fn check_grad_out(
    op: &'static str,
    q: &Tensor,
    v: &Tensor,
    grad_out: &Tensor,
) -> Result<()> {
    let (qs, vs, gs) = (q.sizes(), v.sizes(), grad_out.sizes());
    if gs != [qs[0], qs[1], qs[2], vs[3]] {
        return Err(Error::Shape {
            op,
            detail: format!(
                "expected grad_out of the output's shape [batch, heads, queries, d_v] = \
                 [{}, {}, {}, {}], got {gs:?}",
                qs[0], qs[1], qs[2], vs[3]
            ),
        });
    }
    Ok(())
}

/// `score_mod_grad` applied to every entry: the gradient of the scores from the gradient
/// of the modified scores.
///
/// # Shapes
/// `grad_modified`, `scores`: `[batch, heads, queries, keys]`; returns the same shape.
pub fn through_score_mod(
    grad_modified: &Tensor,
    scores: &Tensor,
    score_mod_grad: impl ScoreModGrad,
) -> Tensor {
    let [batch, heads, queries, keys] = scores.dims();
    let (grads, values) = (grad_modified.to_vec(), scores.to_vec());
    let mut out = Vec::with_capacity(values.len());
    for b in 0..batch {
        for h in 0..heads {
            for q_idx in 0..queries {
                let row = ((b * heads + h) * queries + q_idx) * keys;
                out.extend((0..keys).map(|kv_idx| {
                    let i = row + kv_idx;
                    score_mod_grad(grads[i], values[i], b, h, q_idx, kv_idx)
                }));
            }
        }
    }
    Tensor::from_vec(out, &[batch, heads, queries, keys])
}

/// The gradient of a key/value head repeated `groups` times (chapter 7's `repeat_kv`):
/// the sum of the gradients of its copies.
///
/// # Shapes
/// `grad`: `[batch, kv_heads · groups, keys, d]`; returns `[batch, kv_heads, keys, d]`.
pub fn repeat_kv_backward(grad: &Tensor, groups: usize) -> Tensor {
    let [batch, heads, keys, d] = grad.dims();
    grad.reshape([batch, heads / groups, groups, keys, d])
        .sum_dim(2, false)
}

/// The gradients of [`flex_attention`](crate::formula::flex_attention)'s `q`, `k`, `v`
/// for the output gradient `grad_out`, with `score_mod_grad` the backward of `score_mod`.
/// The forward is computed again for the weights and the scores the backward needs.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `grad_out`: `[batch, heads, queries, d_v]`. Returns
/// the shapes of `q`, `k`, `v`.
pub fn flex_attention_backward(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    grad_out: &Tensor,
    score_mod: impl ScoreMod,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod,
) -> Result<FlexGrads> {
    flex_attention_backward_with(
        q,
        k,
        v,
        grad_out,
        score_mod,
        score_mod_grad,
        mask_mod,
        softmax_backward,
    )
}

/// [`flex_attention_backward`] with softmax's backward as an argument, the one step whose
/// order of additions its twin
/// [`flex_attention_backward_in_pytorch_order`](crate::pytorch_order::flex_attention_backward_in_pytorch_order)
/// changes: chapter 10's `softmax_backward` gives the formula.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `grad_out`: `[batch, heads, queries, d_v]`. Returns
/// the shapes of `q`, `k`, `v`.
#[allow(clippy::too_many_arguments)] // the inputs, three functions and softmax's backward
// ANCHOR: flex_attention_backward
pub fn flex_attention_backward_with(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    grad_out: &Tensor, // [batch, heads, queries, d_v]
    score_mod: impl ScoreMod,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod,
    softmax_backward: impl Fn(&Tensor, &Tensor) -> Tensor,
) -> Result<FlexGrads> {
    let groups = check_shapes("flex_attention_backward", q, k, v)?;
    check_grad_out("flex_attention_backward", q, v, grad_out)?;
    // The forward again, keeping what the backward needs.
    let (k_rep, v_rep) = (repeat_kv(k, groups), repeat_kv(v, groups));
    let scale = (1.0 / (q.size(-1) as f64).sqrt()) as f32;
    let k_t = k_rep.transpose(-2, -1);
    let scores = q.matmul(&k_t) * scale;
    let hidden = hidden(mask_mod, scores.dims());
    let weights = modified(&scores, score_mod)
        .masked_fill(&hidden, f32::NEG_INFINITY)
        .softmax(-1);
    // Backward, step by step.
    let (grad_weights, grad_v) = matmul_backward(&weights, &v_rep, grad_out);
    let grad_modified = softmax_backward(&weights, &grad_weights);
    let grad_modified = masked_fill_backward(&grad_modified, &hidden);
    let grad_scores = through_score_mod(&grad_modified, &scores, score_mod_grad);
    let (grad_q, grad_k_t) = matmul_backward(q, &k_t, &(grad_scores * scale));
    Ok(FlexGrads {
        q: grad_q,
        k: repeat_kv_backward(&grad_k_t.transpose(-2, -1), groups),
        v: repeat_kv_backward(&grad_v, groups),
    })
}
// ANCHOR_END: flex_attention_backward
