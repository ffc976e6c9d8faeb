//! The model: chapter 15's layers, sized by the configuration, holding the loaded
//! parameters instead of drawn ones.
//!
//! Nothing here is new: [`TinyModel`], [`Layer`], [`Attention`], [`SwiGLU`] and
//! [`Recipe`] are chapter 15's, the RMSNorm is the tensor crate's `nn::RMSNorm`. A real
//! model only fills them with 30 layers of trained numbers. The parts SmolLM2 does not
//! have (sinks, the output gate, QK-norm) are `None`, and the recipe switches them off
//! with softcapping and local layers; QK-norm is on for Qwen3 only.

use ch15_modern_layer::swiglu::SwiGLU;
use ch15_modern_layer::{Attention, Layer, Recipe, TinyModel};
use rayon::prelude::*;
use shared::nn::{Embedding, Linear, PackedWeight, RMSNorm};

use crate::config::{Architecture, Config};
use crate::error::LoadError;
use crate::weights::Weights;

/// The switches of chapter 15's layer for a model of this configuration.
// ANCHOR: recipe
pub fn recipe(config: &Config) -> Recipe {
    Recipe {
        theta: config.rope_theta,
        llama31_scaling: false,
        qk_norm: config.architecture == Architecture::Qwen3,
        softcap: None,
        sinks: false,
        window: config.context_length,
        sink_tokens: 0,
        local_per_global: None, // every layer global
        output_gate: false,
    }
}
// ANCHOR_END: recipe

/// An RMSNorm with loaded weights.
///
/// # Shapes
/// `weight`: `[features]`.
pub fn rms_norm(weight: shared::Tensor, eps: f64) -> RMSNorm {
    RMSNorm {
        normalized_shape: weight.sizes().to_vec(),
        weight: Some(weight),
        eps: Some(eps),
    }
}

/// Chapter 15's model filled with the parameters in `weights` (which it empties).
///
/// # Shapes
/// Token ids `[batch, tokens]`, logits `[batch, tokens, vocab_size]`.
// ANCHOR: build
pub fn build(config: &Config, weights: &mut Weights) -> Result<TinyModel, LoadError> {
    let Config {
        vocab_size: v,
        d_model: d,
        n_heads: h,
        n_kv_heads: kv,
        head_dim: hd,
        d_ff,
        ..
    } = *config;
    let eps = config.rms_norm_eps;
    let embedding = weights.take("model.embed_tokens.weight", &[v, d])?;
    let mut layers = Vec::with_capacity(config.n_layers);
    for i in 0..config.n_layers {
        let mut take = |name: &str, shape: &[usize]| {
            weights.take(&format!("model.layers.{i}.{name}"), shape)
        };
        let linear = |w| Linear::from_parameters(w, None);
        let qk_norm = if config.architecture == Architecture::Qwen3 {
            Some((
                rms_norm(take("self_attn.q_norm.weight", &[hd])?, eps),
                rms_norm(take("self_attn.k_norm.weight", &[hd])?, eps),
            ))
        } else {
            None
        };
        layers.push(Layer {
            attn_norm: rms_norm(take("input_layernorm.weight", &[d])?, eps),
            attn: Attention {
                n_heads: h,
                n_kv_heads: kv,
                head_dim: hd,
                w_query: linear(take("self_attn.q_proj.weight", &[h * hd, d])?),
                w_key: linear(take("self_attn.k_proj.weight", &[kv * hd, d])?),
                w_value: linear(take("self_attn.v_proj.weight", &[kv * hd, d])?),
                out_proj: linear(take("self_attn.o_proj.weight", &[d, h * hd])?),
                qk_norm,
                sinks: None,  // no sinks
                w_gate: None, // no output gate
            },
            ffn_norm: rms_norm(take("post_attention_layernorm.weight", &[d])?, eps),
            ffn: SwiGLU {
                w_gate: linear(take("mlp.gate_proj.weight", &[d_ff, d])?),
                w_up: linear(take("mlp.up_proj.weight", &[d_ff, d])?),
                w_down: linear(take("mlp.down_proj.weight", &[d, d_ff])?),
            },
        });
    }
    let lm_head = if config.tied_embeddings {
        embedding.clone() // the same numbers, shared, not copied
    } else {
        weights.take("lm_head.weight", &[v, d])?
    };
    let model = TinyModel {
        tok_emb: Embedding { weight: embedding },
        layers,
        final_norm: rms_norm(weights.take("model.norm.weight", &[d])?, eps),
        lm_head: Linear::from_parameters(lm_head, None),
    };
    // A tied checkpoint may still store the head (safetensors can): the embedding.
    if config.tied_embeddings && weights.contains("lm_head.weight") {
        weights.take("lm_head.weight", &[v, d])?;
    }
    if let Some(extra) = weights.remaining().first() {
        return Err(LoadError::Unsupported {
            path: weights.path.clone(),
            field: "tensor".into(),
            value: format!("{extra} (not part of the configuration)"),
        });
    }
    Ok(model)
}
// ANCHOR_END: build

/// Every weight of `model` packed once for the products of many rows: a prompt's tokens go
/// through each layer together, and without this each of those products would first copy
/// its weight into the order the product reads (its "packing"), 538 MB for every prompt.
/// The products keep their bits; the packed copies (as much memory again as the weights)
/// stay as long as the returned values. Worth it where the model reads many prompts, as
/// the narrative does; a single prompt packs each weight once anyway.
pub fn pack_weights(model: &TinyModel) -> Vec<PackedWeight> {
    let mut linears = vec![&model.lm_head];
    for layer in &model.layers {
        let (a, f) = (&layer.attn, &layer.ffn);
        linears.extend([&a.w_query, &a.w_key, &a.w_value, &a.out_proj]);
        linears.extend([&f.w_gate, &f.w_up, &f.w_down]);
    }
    // Each weight packed on its own: the weights are shared between the threads.
    linears.par_iter().map(|l| l.pack_weight()).collect()
}
