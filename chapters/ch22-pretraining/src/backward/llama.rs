//! The Llama model's backward: the head, the last RMSNorm, the layers from the last to the
//! first (SwiGLU, then attention with RoPE turned back), and the token table.

use ch07_multihead_split::heads::merge_heads;
use ch10_backward::heads::merge_heads_backward;
use ch15_modern_layer::rope::rope_tables;
use shared::Tensor;
use shared::nn::Linear;

use crate::arithmetic::Arithmetic;
use crate::backward::rope::rope_backward;
use crate::backward::swiglu::swiglu_backward;
use crate::backward::tied_embedding::tied_embedding_backward;
use crate::model::llama::{Llama, THETA, Tape};

/// The gradient of every parameter, in `named_parameters()` order, from the gradient of
/// the logits.
///
/// # Shapes
/// `grad_logits`: `[batch, tokens, vocab_size]`, as the logits of `tape`.
// ANCHOR: llama_backward
pub fn llama_backward<A: Arithmetic>(
    model: &Llama,
    tape: &Tape,
    grad_logits: &Tensor,
) -> Vec<Tensor> {
    let head = Linear::from_parameters(model.wte.weight.clone(), None);
    let head = A::linear_backward(&head, &tape.normed, grad_logits);
    let norm = A::rms_norm_backward(&model.norm, &tape.stream, &head.input, None);
    let mut grad = norm.input;
    let positions: Vec<usize> = (0..tape.ids.size(1)).collect();
    let mut layers = Vec::with_capacity(model.layers.len());
    for (layer, t) in model.layers.iter().zip(&tape.layers).rev() {
        let attn = &layer.attn;
        // out = x₁ + ffn(ffn_norm(x₁))
        let gated = (&t.gate, &t.up, &t.gated);
        let ffn = swiglu_backward::<A>(&layer.ffn, &t.h2, gated, &grad);
        let ffn_norm =
            A::rms_norm_backward(&layer.ffn_norm, &t.x1, &ffn.input, Some(&grad));
        let grad_x1 = ffn_norm.input;
        // x₁ = x + out_proj(attention(rope(q), rope(k), v)), q, k, v from attn_norm(x)
        let out_proj = A::linear_backward(&attn.out_proj, &t.context, &grad_x1);
        let grad_heads = merge_heads_backward(&out_proj.input, attn.n_heads);
        let core = A::attention_backward(&t.attention, &grad_heads);
        let (cos, sin) = rope_tables(&positions, attn.head_dim, THETA, false);
        let grad_q = merge_heads(&rope_backward(&core.queries, &cos, &sin));
        let grad_k = merge_heads(&rope_backward(&core.keys, &cos, &sin));
        let w_query = A::linear_backward(&attn.w_query, &t.h, &grad_q);
        let w_key = A::linear_backward(&attn.w_key, &t.h, &grad_k);
        let w_value =
            A::linear_backward(&attn.w_value, &t.h, &merge_heads(&core.values));
        // The queries were made first, the values last: autograd adds them latest first.
        let grad_h = &(&w_value.input + &w_key.input) + &w_query.input;
        let attn_norm =
            A::rms_norm_backward(&layer.attn_norm, &t.x, &grad_h, Some(&grad_x1));
        grad = attn_norm.input;
        layers.push(vec![
            attn_norm.weight,
            w_query.weight,
            w_key.weight,
            w_value.weight,
            out_proj.weight,
            ffn_norm.weight,
            ffn.w_gate.weight,
            ffn.w_up.weight,
            ffn.w_down.weight,
        ]);
    }
    let wte = tied_embedding_backward(&head.weight, &tape.ids, &grad);
    let mut all = vec![wte];
    all.extend(layers.into_iter().rev().flatten());
    all.push(norm.weight);
    all
}
// ANCHOR_END: llama_backward
