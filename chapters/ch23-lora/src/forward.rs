//! The model's forward pass with the adapters beside their projections, keeping what the
//! backward needs: chapter 15's layer, each projection `W x` or `W x + scale · B A x`, the
//! attention core chapter 10's on the key/value heads repeated for their query heads.
//!
//! With every `B` zero each adapter adds exactly zero, and the logits are chapter 15's
//! (a test holds them bit for bit).

use ch05_causal::causal_mask;
use ch07_multihead_split::grouped::repeat_kv;
use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch10_backward::attention::attention_forward;
use ch15_modern_layer::rope::{apply_rope, rope_tables};
use ch15_modern_layer::{Layer, Recipe, TinyModel};
use ch22_pretraining::model::llama::{LayerTape, Tape};
use shared::Tensor;
use shared::nn::Dropout;

use crate::adapter::Adapter;
use crate::targets::Target;

/// A projection of layer `i`, with its adapter if it has one.
///
/// # Shapes
/// `x`: `[.., d_in]`. Returns `[.., d_out]`.
pub fn project(
    layer: &Layer,
    adapter: &Adapter,
    i: usize,
    target: Target,
    x: &Tensor,
) -> Tensor {
    let base = target.linear(layer);
    match adapter.get(i, target) {
        Some(lora) => lora.forward(base, x),
        None => base.forward(x),
    }
}

/// The logits of every position, and the tape.
///
/// # Shapes
/// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
// ANCHOR: forward_with_tape
pub fn forward_with_tape(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &Adapter,
    ids: &Tensor<i64>,
) -> (Tensor, Tape) {
    let mut x = model.tok_emb.forward(ids);
    let mut tapes = Vec::with_capacity(model.layers.len());
    for (i, layer) in model.layers.iter().enumerate() {
        let (out, tape) = layer_forward(layer, recipe, adapter, i, &x);
        tapes.push(tape);
        x = out;
    }
    let normed = model.final_norm.forward(&x);
    let logits = model.lm_head.forward(&normed);
    let tape = Tape {
        ids: ids.clone(),
        layers: tapes,
        stream: x,
        normed,
    };
    (logits, tape)
}
// ANCHOR_END: forward_with_tape

/// The logits of every position.
///
/// # Shapes
/// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
pub fn forward(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &Adapter,
    ids: &Tensor<i64>,
) -> Tensor {
    forward_with_tape(model, recipe, adapter, ids).0
}

/// Layer `i`, as chapter 15's `Layer::forward` with a plain recipe, each projection with
/// its adapter, keeping what the backward needs.
///
/// # Shapes
/// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
// ANCHOR: layer_forward
pub fn layer_forward(
    layer: &Layer,
    recipe: &Recipe,
    adapter: &Adapter,
    i: usize,
    x: &Tensor,
) -> (Tensor, LayerTape) {
    let attn = &layer.attn;
    let tokens = x.size(1);
    let positions: Vec<usize> = (0..tokens).collect();
    let proj = |target, input: &Tensor| project(layer, adapter, i, target, input);
    let h = layer.attn_norm.forward(x);
    let q = split_heads(&proj(Target::Query, &h), attn.n_heads);
    let k = split_heads(&proj(Target::Key, &h), attn.n_kv_heads);
    let v = split_heads(&proj(Target::Value, &h), attn.n_kv_heads);
    let (cos, sin) = rope_tables(
        &positions,
        attn.head_dim,
        recipe.theta,
        recipe.llama31_scaling,
    );
    let (q, k) = (apply_rope(&q, &cos, &sin), apply_rope(&k, &cos, &sin));
    let (k, v) = (repeat_kv(&k, attn.n_rep()), repeat_kv(&v, attn.n_rep()));
    let (heads, attention) =
        attention_forward(&q, &k, &v, &causal_mask(tokens), &Dropout::new(0.0));
    let context = merge_heads(&heads);
    let x1 = x + &proj(Target::Output, &context);
    let h2 = layer.ffn_norm.forward(&x1);
    let gate = proj(Target::Gate, &h2);
    let up = proj(Target::Up, &h2);
    let gated = gate.silu() * &up;
    let out = &x1 + &proj(Target::Down, &gated);
    let tape = LayerTape {
        x: x.clone(),
        h,
        attention,
        context,
        x1,
        h2,
        gate,
        up,
        gated,
    };
    (out, tape)
}
// ANCHOR_END: layer_forward
