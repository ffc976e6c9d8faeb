//! A draft for chapter 17's speculative decoding, cut from the model itself: its first
//! layers, then its own final norm and head (the layers skipped are simply not run). It
//! shares the target's parameters, so it costs no memory, only a fraction of the time of a
//! full pass; how often the full model agrees with it is what the narrative measures.

use ch15_modern_layer::swiglu::SwiGLU;
use ch15_modern_layer::{Attention, Layer, TinyModel};
use shared::nn::Embedding;

/// A copy of one layer that shares its tensors.
fn shared_layer(layer: &Layer) -> Layer {
    let a = &layer.attn;
    Layer {
        attn_norm: layer.attn_norm.clone(),
        attn: Attention {
            n_heads: a.n_heads,
            n_kv_heads: a.n_kv_heads,
            head_dim: a.head_dim,
            w_query: a.w_query.clone(),
            w_key: a.w_key.clone(),
            w_value: a.w_value.clone(),
            out_proj: a.out_proj.clone(),
            q_norm: a.q_norm.clone(),
            k_norm: a.k_norm.clone(),
            sinks: a.sinks.clone(),
            w_gate: a.w_gate.clone(),
        },
        ffn_norm: layer.ffn_norm.clone(),
        ffn: SwiGLU { w_gate: layer.ffn.w_gate.clone(), w_up: layer.ffn.w_up.clone(), w_down: layer.ffn.w_down.clone() },
    }
}

/// The model's first `n_layers` layers with its embedding, final norm and head.
///
/// # Shapes
/// As the model: token ids `[batch, tokens]`, logits `[batch, tokens, vocab_size]`.
// ANCHOR: early_exit_draft
pub fn early_exit_draft(model: &TinyModel, n_layers: usize) -> TinyModel {
    TinyModel {
        tok_emb: Embedding { weight: model.tok_emb.weight.clone() },
        layers: model.layers.iter().take(n_layers).map(shared_layer).collect(),
        final_norm: model.final_norm.clone(),
        lm_head: model.lm_head.clone(),
    }
}
// ANCHOR_END: early_exit_draft
