//! The formula's backward with softmax's backward in the order PyTorch adds a row
//! (chapter 10's `pytorch_order`): autograd's gradients bit for bit for rows of any
//! length. The formula ([`crate::backward`]) adds each row left to right; PyTorch's CPU
//! kernel adds rows at least as long as its vector lanes (16 floats on the reference
//! machine, the chapter's rows of 16 keys included) lane by lane, so the two agree to a few
//! units in the last place. The book's appendix "Matching PyTorch to the last bit" says
//! why.

use ch07_multihead_split::grouped::repeat_kv;
use ch10_backward::matmul::matmul_backward;
use ch10_backward::pointwise::masked_fill_backward;
use ch10_backward::pytorch_order::softmax_backward_in_pytorch_order;
use shared::{Result, Tensor};

use crate::backward::{
    FlexGrads, ScoreModGrad, check_grad_out, repeat_kv_backward, through_score_mod,
};
use crate::formula::{check_shapes, hidden, modified};
use crate::recipes::{MaskMod, ScoreMod};

/// [`flex_attention_backward`](crate::backward::flex_attention_backward) with the softmax
/// step in PyTorch's order. The same steps, kept beside the formula so the listing stays
/// the textbook one.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `grad_out`: `[batch, heads, queries, d_v]`. Returns
/// the shapes of `q`, `k`, `v`.
pub fn flex_attention_backward_in_pytorch_order(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    grad_out: &Tensor,
    score_mod: impl ScoreMod,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod,
) -> Result<FlexGrads> {
    let op = "flex_attention_backward_in_pytorch_order";
    let groups = check_shapes(op, q, k, v)?;
    check_grad_out(op, q, v, grad_out)?;
    let (k_rep, v_rep) = (repeat_kv(k, groups), repeat_kv(v, groups));
    let scale = (1.0 / (q.size(-1) as f64).sqrt()) as f32;
    let k_t = k_rep.transpose(-2, -1);
    let scores = q.matmul(&k_t) * scale;
    let hidden = hidden(mask_mod, scores.dims());
    let weights = modified(&scores, score_mod)
        .masked_fill(&hidden, f32::NEG_INFINITY)
        .softmax(-1);
    let (grad_weights, grad_v) = matmul_backward(&weights, &v_rep, grad_out);
    let grad_modified = softmax_backward_in_pytorch_order(&weights, &grad_weights);
    let grad_modified = masked_fill_backward(&grad_modified, &hidden);
    let grad_scores = through_score_mod(&grad_modified, &scores, score_mod_grad);
    let (grad_q, grad_k_t) = matmul_backward(q, &k_t, &(grad_scores * scale));
    Ok(FlexGrads {
        q: grad_q,
        k: repeat_kv_backward(&grad_k_t.transpose(-2, -1), groups),
        v: repeat_kv_backward(&grad_v, groups),
    })
}
