//! The backward pass through the frozen model: every activation's gradient, from the loss
//! back to the first layer, but of the weights only the adapters'. The frozen weights'
//! gradients (as large as the weights) are never computed, nor kept, nor given to AdamW:
//! that is what LoRA saves.
//!
//! Each piece is chapter 22's (RMSNorm, SiLU, RoPE, the attention core, grouped heads'
//! sum) or the adapted projection's ([`projection_backward`]).

use ch07_multihead_split::heads::merge_heads;
use ch10_backward::heads::merge_heads_backward;
use ch15_modern_layer::rope::rope_tables;
use ch15_modern_layer::{Layer, Recipe, TinyModel};
use ch22_pretraining::arithmetic::Arithmetic;
use ch22_pretraining::backward::repeat_kv::repeat_kv_backward;
use ch22_pretraining::backward::rope::rope_backward;
use ch22_pretraining::model::llama::{LayerTape, Tape};
use shared::Tensor;

use crate::adapter::Adapter;
use crate::lora::{LoraGrads, ProjectionGrads, projection_backward};
use crate::targets::Target;

/// The gradients of every adapter, in [`Adapter::named_parameters`] order (`A`, `B` of
/// each), from the gradient of the logits.
///
/// # Shapes
/// `grad_logits`: `[batch, tokens, vocab_size]`, as the logits of `tape`.
// ANCHOR: backward
pub fn backward<A: Arithmetic>(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &Adapter,
    tape: &Tape,
    grad_logits: &Tensor,
) -> Vec<Tensor> {
    let head = &model.lm_head.weight; // frozen: only the way back to its input
    let grad_normed = grad_logits
        .flatten(0, 1)
        .matmul(head)
        .reshape(tape.normed.sizes());
    let norm =
        A::rms_norm_backward(&model.final_norm, &tape.stream, &grad_normed, None);
    let mut grad = norm.input;
    let mut layers = Vec::with_capacity(model.layers.len());
    for (i, (layer, t)) in model.layers.iter().zip(&tape.layers).enumerate().rev() {
        let (grad_x, grads) =
            layer_backward::<A>(layer, recipe, adapter, i, t, &grad);
        grad = grad_x;
        layers.push(grads);
    }
    layers
        .into_iter()
        .rev()
        .flatten()
        .flat_map(|g| [g.a, g.b])
        .collect()
}
// ANCHOR_END: backward

/// The sum of a value's gradients from its uses, in the order autograd adds them: the
/// last-made use first.
///
/// # Shapes
/// `terms`: tensors of one shape. Returns it.
fn added(terms: &[&Tensor]) -> Tensor {
    let mut sum = terms[0].clone();
    for term in &terms[1..] {
        sum = &sum + *term;
    }
    sum
}

/// Layer `i`'s backward from its output's gradient: its input's gradient and its adapters'
/// (in the targets' order).
///
/// # Shapes
/// `grad`: `[batch, tokens, d_model]`. Returns the same.
// ANCHOR: layer_backward
pub fn layer_backward<A: Arithmetic>(
    layer: &Layer,
    recipe: &Recipe,
    adapter: &Adapter,
    i: usize,
    t: &LayerTape,
    grad: &Tensor,
) -> (Tensor, Vec<LoraGrads>) {
    let attn = &layer.attn;
    let back = |target: Target, x: &Tensor, g: &Tensor| {
        projection_backward::<A>(target.linear(layer), adapter.get(i, target), x, g)
    };
    // out = x₁ + down(silu(gate(h₂)) ⊙ up(h₂)), h₂ = ffn_norm(x₁)
    let down = back(Target::Down, &t.gated, grad);
    let grad_gated = added(&down.input_terms());
    let grad_up = &grad_gated * &t.gate.silu();
    let grad_gate = A::silu_backward(&t.gate, &(&grad_gated * &t.up));
    let up = back(Target::Up, &t.h2, &grad_up);
    let gate = back(Target::Gate, &t.h2, &grad_gate);
    let grad_h2 = added(&[up.input_terms(), gate.input_terms()].concat());
    let grad_x1 =
        A::rms_norm_backward(&layer.ffn_norm, &t.x1, &grad_h2, Some(grad)).input;
    // x₁ = x + o(attention(rope(q), rope(k), v)), q, k, v from h = attn_norm(x)
    let output = back(Target::Output, &t.context, &grad_x1);
    let grad_heads =
        merge_heads_backward(&added(&output.input_terms()), attn.n_heads);
    let core = A::attention_backward(&t.attention, &grad_heads);
    let positions: Vec<usize> = (0..t.x.size(1)).collect();
    let (cos, sin) = rope_tables(
        &positions,
        attn.head_dim,
        recipe.theta,
        recipe.llama31_scaling,
    );
    let grad_q = merge_heads(&rope_backward(&core.queries, &cos, &sin));
    let grad_k = repeat_kv_backward(&core.keys, attn.n_rep());
    let grad_k = merge_heads(&rope_backward(&grad_k, &cos, &sin));
    let grad_v = merge_heads(&repeat_kv_backward(&core.values, attn.n_rep()));
    let query = back(Target::Query, &t.h, &grad_q);
    let key = back(Target::Key, &t.h, &grad_k);
    let value = back(Target::Value, &t.h, &grad_v);
    // The queries were made first, the values last: autograd adds them latest first.
    let grad_h = added(
        &[value.input_terms(), key.input_terms(), query.input_terms()].concat(),
    );
    let grad_x =
        A::rms_norm_backward(&layer.attn_norm, &t.x, &grad_h, Some(&grad_x1)).input;
    let mut by_target = [query, key, value, output, gate, up, down].map(Some);
    let grads = adapter
        .config
        .targets
        .iter()
        .filter_map(|&target| {
            let at = Target::ALL.iter().position(|&t| t == target)?;
            by_target[at]
                .take()
                .and_then(|g: ProjectionGrads| g.adapter)
                .map(|(_, g)| g)
        })
        .collect();
    (grad_x, grads)
}
// ANCHOR_END: layer_backward
