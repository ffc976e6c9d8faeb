//! The GPT-2 model's backward: the head, the last LayerNorm, the blocks from the last to
//! the first, and the two tables.
//!
//! A block is `x₁ = x + attn(ln_1(x))`, `out = x₁ + mlp(ln_2(x₁))`: every stream value
//! is used twice, by a norm and by the addition after it, so its gradient is the sum of
//! the direct one and the one back through the sub-layer.

use ch07_multihead_split::heads::merge_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::heads::merge_heads_backward;
use ch10_backward::linear::LinearGrads;
use ch10_backward::multihead::MultiHeadTape;
use ch11_training::embedding_backward::embedding_backward;
use shared::nn::Linear;
use shared::{Tensor, arange};

use crate::arithmetic::Arithmetic;
use crate::backward::mlp::mlp_backward;
use crate::backward::tied_embedding::tied_embedding_backward;
use crate::model::gpt2::{Gpt2, Tape};

/// The gradients of chapter 7's attention's four projections and of its input.
#[derive(Clone, Debug)]
pub struct AttentionGrads {
    /// `W_query`, `W_key`, `W_value`, `out_proj`, in that order.
    pub projections: [LinearGrads; 4],
    /// The attention's input.
    pub input: Tensor,
}

/// Chapter 10's `multihead_backward` with the arithmetic `A`.
///
/// # Shapes
/// `grad_out`: `[batch, tokens, d_model]`.
// ANCHOR: attention_backward
pub fn attention_backward<A: Arithmetic>(
    mha: &MultiHeadAttention,
    tape: &MultiHeadTape,
    grad_out: &Tensor,
) -> AttentionGrads {
    let out_proj = A::linear_backward(&mha.out_proj, &tape.context, grad_out);
    let grad_heads = merge_heads_backward(&out_proj.input, mha.num_heads);
    let core = A::attention_backward(&tape.attention, &grad_heads);
    let w_query =
        A::linear_backward(&mha.w_query, &tape.x, &merge_heads(&core.queries));
    let w_key = A::linear_backward(&mha.w_key, &tape.x, &merge_heads(&core.keys));
    let w_value =
        A::linear_backward(&mha.w_value, &tape.x, &merge_heads(&core.values));
    // The forward made the keys, the queries, then the values; autograd adds the three
    // uses of x latest first.
    let input = &(&w_value.input + &w_query.input) + &w_key.input;
    AttentionGrads {
        projections: [w_query, w_key, w_value, out_proj],
        input,
    }
}
// ANCHOR_END: attention_backward

/// The gradient of every parameter, in `named_parameters()` order, from the gradient of
/// the logits.
///
/// # Shapes
/// `grad_logits`: `[batch, tokens, vocab_size]`, as the logits of `tape`.
// ANCHOR: gpt2_backward
pub fn gpt2_backward<A: Arithmetic>(
    model: &Gpt2,
    tape: &Tape,
    grad_logits: &Tensor,
) -> Vec<Tensor> {
    let head = Linear::from_parameters(model.wte.weight.clone(), None);
    let head = A::linear_backward(&head, &tape.normed, grad_logits);
    let ln_f = A::layer_norm_backward(&model.ln_f, &tape.stream, &head.input);
    let mut grad = ln_f.input; // the gradient of the stream, from the last block back
    let mut blocks = Vec::with_capacity(model.blocks.len());
    for (block, t) in model.blocks.iter().zip(&tape.blocks).rev() {
        // out = x₁ + mlp(ln_2(x₁))
        let mlp = mlp_backward::<A>(&block.mlp, &t.h2, &t.up, &t.act, &grad);
        let ln_2 = A::layer_norm_backward(&block.ln_2, &t.x1, &mlp.c_fc.input);
        let grad_x1 = &grad + &ln_2.input;
        // x₁ = x + attn(ln_1(x))
        let attn = attention_backward::<A>(&block.attn, &t.attn, &grad_x1);
        let ln_1 = A::layer_norm_backward(&block.ln_1, &t.x, &attn.input);
        grad = &grad_x1 + &ln_1.input;
        let mut params = vec![ln_1.weight];
        params.extend(attn.projections.map(|p| p.weight));
        params.extend([ln_2.weight, mlp.c_fc.weight, mlp.c_proj.weight]);
        blocks.push(params);
    }
    // x = wte[ids] + wpe[positions]; the positions' table was broadcast over the batch.
    let wte = tied_embedding_backward(&head.weight, &tape.ids, &grad);
    let positions = arange(0, tape.ids.size(1), 1);
    let rows = model.wpe.weight.size(0);
    let wpe = embedding_backward(&positions, &grad.sum_dim(0, false), rows);
    let mut all = vec![wte, wpe];
    all.extend(blocks.into_iter().rev().flatten());
    all.push(ln_f.weight);
    all
}
// ANCHOR_END: gpt2_backward
