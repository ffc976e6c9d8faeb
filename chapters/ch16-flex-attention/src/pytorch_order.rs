//! The formula's backward with softmax's backward in the order PyTorch adds a row
//! (chapter 10's `pytorch_order`): autograd's gradients bit for bit for rows of any
//! length. The formula ([`crate::backward`]) adds each row left to right; PyTorch's CPU
//! kernel adds rows at least as long as its vector lanes (16 floats on the reference
//! machine, the chapter's rows of 16 keys included) lane by lane, so the two agree to a few
//! units in the last place. The book's appendix "Matching PyTorch to the last bit" says
//! why.

use ch10_backward::pytorch_order::softmax_backward_in_pytorch_order;
use shared::{Result, Tensor};

use crate::backward::{FlexGrads, ScoreModGrad, flex_attention_backward_with};
use crate::recipes::{MaskMod, ScoreMod};

/// [`flex_attention_backward`](crate::backward::flex_attention_backward) with the softmax
/// step in PyTorch's order: the formula's steps, given chapter 10's
/// `softmax_backward_in_pytorch_order` for softmax's backward.
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
    flex_attention_backward_with(
        q,
        k,
        v,
        grad_out,
        score_mod,
        score_mod_grad,
        mask_mod,
        softmax_backward_in_pytorch_order,
    )
}
