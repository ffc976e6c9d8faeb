//! Llama, from chapter 15's layer: a token table, layers of `x + attention(RMSNorm(x))`
//! and `x + SwiGLU(RMSNorm(x))` with RoPE inside the attention, a last RMSNorm, and the
//! token table again as the output head. No position table: RoPE turns the queries and
//! keys by their positions instead.

use ch05_causal::causal_mask;
use ch07_multihead_split::heads::merge_heads;
use ch10_backward::attention::{AttentionTape, attention_forward};
use ch15_modern_layer::attention::EPS;
use ch15_modern_layer::layer::Layer;
use ch15_modern_layer::recipe::Recipe;
use shared::Tensor;
use shared::nn::{Dropout, Embedding, RMSNorm};

use crate::config::Config;
use crate::model::init::init_weights;
use crate::model::tied_head;

/// RoPE's base, Llama 2's.
pub const THETA: f64 = 10_000.0;

/// The Llama model.
// ANCHOR: llama
pub struct Llama {
    /// `[vocab_size, d_model]`: every token's vector, and the output head.
    pub wte: Embedding,
    /// Chapter 15's layers, plain: no QK-norm, sinks, window or output gate.
    pub layers: Vec<Layer>,
    /// The RMSNorm before the head.
    pub norm: RMSNorm,
    /// The longest sequence it is trained to read (RoPE itself has no limit).
    pub context: usize,
}
// ANCHOR_END: llama

/// What a layer's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct LayerTape {
    /// The layer's input, `attn_norm`'s input: `[batch, tokens, d_model]`.
    pub x: Tensor,
    /// `attn_norm(x)`, the projections' input.
    pub h: Tensor,
    /// The attention core's record, on the turned queries and keys.
    pub attention: AttentionTape,
    /// The merged heads, `out_proj`'s input.
    pub context: Tensor,
    /// The stream after attention, `ffn_norm`'s input.
    pub x1: Tensor,
    /// `ffn_norm(x1)`, SwiGLU's input.
    pub h2: Tensor,
    /// `w_gate`'s output, SiLU's input: `[batch, tokens, d_ff]`.
    pub gate: Tensor,
    /// `w_up`'s output.
    pub up: Tensor,
    /// `silu(gate) ⊙ up`, `w_down`'s input.
    pub gated: Tensor,
}

/// What the model's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct Tape {
    /// The token ids, `[batch, tokens]`.
    pub ids: Tensor<i64>,
    /// Each layer's tape, the first layer first.
    pub layers: Vec<LayerTape>,
    /// The stream after the last layer, `norm`'s input.
    pub stream: Tensor,
    /// `norm(stream)`, the head's input.
    pub normed: Tensor,
}

/// The recipe of a plain Llama layer: RoPE with base [`THETA`] and nothing else.
pub fn recipe() -> Recipe {
    Recipe {
        theta: THETA,
        llama31_scaling: false,
        qk_norm: false,
        softcap: None,
        sinks: false,
        window: usize::MAX,
        sink_tokens: 0,
        local_per_global: None,
        output_gate: false,
    }
}

impl Llama {
    /// The model of size `config`, initialised as nanoGPT initialises its GPT: the layers
    /// built in order, then every matrix drawn again.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens]` ids with `tokens <= config.context`.
    pub fn new(config: &Config) -> Llama {
        let d = config.d_model;
        let heads = config.n_heads;
        let mut model = Llama {
            wte: Embedding::new(config.vocab_size, d),
            layers: (0..config.n_layers)
                .map(|_| Layer::plain(d, heads, heads, config.swiglu_width()))
                .collect(),
            norm: RMSNorm::with_options(&[d], Some(EPS), true),
            context: config.context,
        };
        let names: Vec<String> = model
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        init_weights(
            config,
            names.into_iter().zip(model.parameters_mut()).collect(),
        );
        model
    }

    /// The logits of every position, and the tape.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    // ANCHOR: forward
    pub fn forward_with_tape(&self, ids: &Tensor<i64>) -> (Tensor, Tape) {
        let mut x = self.wte.forward(ids);
        let mut tapes = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (out, tape) = layer_forward(layer, &x);
            tapes.push(tape);
            x = out;
        }
        let normed = self.norm.forward(&x);
        let logits = tied_head(&normed, &self.wte.weight);
        let tape = Tape {
            ids: ids.clone(),
            layers: tapes,
            stream: x,
            normed,
        };
        (logits, tape)
    }
    // ANCHOR_END: forward

    /// Every layer's attention weights, where each query looks.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns one `[batch, heads, tokens, tokens]` per layer,
    /// the first layer first.
    pub fn attention_weights(&self, ids: &Tensor<i64>) -> Vec<Tensor> {
        let (_, tape) = self.forward_with_tape(ids);
        tape.layers
            .into_iter()
            .map(|l| l.attention.weights)
            .collect()
    }

    /// Every parameter with its name, in `named_parameters()` order.
    pub fn named_parameters(&self) -> Vec<(String, &Tensor)> {
        let mut all = vec![("wte.weight".to_string(), &self.wte.weight)];
        for (i, layer) in self.layers.iter().enumerate() {
            let a = &layer.attn;
            let f = &layer.ffn;
            let parts = [
                ("attn_norm.weight", norm(&layer.attn_norm)),
                ("attn.w_query.weight", &a.w_query.weight),
                ("attn.w_key.weight", &a.w_key.weight),
                ("attn.w_value.weight", &a.w_value.weight),
                ("attn.out_proj.weight", &a.out_proj.weight),
                ("ffn_norm.weight", norm(&layer.ffn_norm)),
                ("ffn.w_gate.weight", &f.w_gate.weight),
                ("ffn.w_up.weight", &f.w_up.weight),
                ("ffn.w_down.weight", &f.w_down.weight),
            ];
            all.extend(parts.map(|(name, p)| (format!("layers.{i}.{name}"), p)));
        }
        all.push(("norm.weight".to_string(), norm(&self.norm)));
        all
    }

    /// Every parameter, mutable, in `named_parameters()` order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let Llama {
            wte, layers, norm, ..
        } = self;
        let mut all = vec![&mut wte.weight];
        for layer in layers {
            all.extend(layer.parameters_mut());
        }
        all.extend(norm.weight.as_mut());
        all
    }
}

/// One layer, as chapter 15's `Layer::forward` with a plain recipe, the attention core
/// chapter 10's (the scores divided by `√head_dim` after the mask), keeping what the
/// backward needs.
///
/// # Shapes
/// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
// ANCHOR: layer_forward
pub fn layer_forward(layer: &Layer, x: &Tensor) -> (Tensor, LayerTape) {
    let tokens = x.size(1);
    let positions: Vec<usize> = (0..tokens).collect();
    let h = layer.attn_norm.forward(x);
    let (q, k, v) = layer.attn.qkv(&h, &positions, &recipe());
    let hidden = causal_mask(tokens);
    let (heads, attention) =
        attention_forward(&q, &k, &v, &hidden, &Dropout::new(0.0));
    let context = merge_heads(&heads);
    let x1 = x + &layer.attn.out_proj.forward(&context);
    let h2 = layer.ffn_norm.forward(&x1);
    let gate = layer.ffn.w_gate.forward(&h2);
    let up = layer.ffn.w_up.forward(&h2);
    let gated = gate.silu() * &up;
    let out = &x1 + &layer.ffn.w_down.forward(&gated);
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

/// An RMSNorm's weight (every norm of the model has one).
fn norm(layer: &RMSNorm) -> &Tensor {
    layer.weight.as_ref().expect("an RMSNorm with a weight")
}
