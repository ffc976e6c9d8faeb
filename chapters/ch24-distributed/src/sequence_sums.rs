//! The sums over the sequence of a training step: every weight's gradient adds up one
//! term per token. A rank holds the terms of its own tokens only; to give one process's
//! bits, the sums are taken from every token's pieces (each weight's input and the
//! gradient of its output), gathered in sequence order, by the very functions one
//! process calls: chapter 19's `grad_yᵀ·x` in PyTorch's order for the projections,
//! chapter 22's RMSNorm backward for the norms, its tied embedding for the token table.

use ch15_modern_layer::layer::Layer;
use ch19_induction_heads::pytorch_order::{
    PytorchOrder, weight_gradient_in_pytorch_order,
};
use ch22_pretraining::arithmetic::Arithmetic;
use ch22_pretraining::backward::tied_embedding::tied_embedding_backward;
use ch22_pretraining::config::Config;
use ch22_pretraining::model::Llama;
use shared::Tensor;
use shared::nn::RMSNorm;

/// One layer's pieces, token by token: what the gradients of its nine weights sum over.
/// Each field is `[batch, tokens, ..]`, for a rank's tokens or, gathered, for all.
#[derive(Clone, Debug)]
pub struct LayerRows {
    /// `attn_norm`'s input, the layer's input.
    pub x: Tensor,
    /// The gradient of `attn_norm`'s output.
    pub grad_h: Tensor,
    /// The projections' input, `attn_norm(x)`.
    pub h: Tensor,
    /// The gradients of the queries', keys' and values' projections, heads merged.
    pub grad_qkv: [Tensor; 3],
    /// `out_proj`'s input, the attention's heads merged.
    pub context: Tensor,
    /// The gradient of `out_proj`'s output, the stream's after attention.
    pub grad_x1: Tensor,
    /// `ffn_norm`'s input.
    pub x1: Tensor,
    /// The gradient of `ffn_norm`'s output.
    pub grad_h2: Tensor,
    /// SwiGLU's input, `ffn_norm(x1)`.
    pub h2: Tensor,
    /// The gradients of `w_gate`'s and `w_up`'s outputs.
    pub grad_gate_up: [Tensor; 2],
    /// `w_down`'s input, `silu(gate) ⊙ up`.
    pub gated: Tensor,
    /// The gradient of `w_down`'s output, the layer's output's.
    pub grad_out: Tensor,
}

impl LayerRows {
    /// Several ranks' rows combined field by field: `f` gets one field's tensors, in
    /// the order of `rows` (to gather every rank's rows of it).
    ///
    /// # Shapes
    /// `f` takes `[batch, tokens here, ..]` tensors, returns `[batch, tokens, ..]`.
    pub fn combine<E>(
        rows: &[LayerRows],
        mut f: impl FnMut(&[Tensor]) -> Result<Tensor, E>,
    ) -> Result<LayerRows, E> {
        let mut field = |get: fn(&LayerRows) -> &Tensor| {
            f(&rows.iter().map(|r| get(r).clone()).collect::<Vec<_>>())
        };
        Ok(LayerRows {
            x: field(|r| &r.x)?,
            grad_h: field(|r| &r.grad_h)?,
            h: field(|r| &r.h)?,
            grad_qkv: [
                field(|r| &r.grad_qkv[0])?,
                field(|r| &r.grad_qkv[1])?,
                field(|r| &r.grad_qkv[2])?,
            ],
            context: field(|r| &r.context)?,
            grad_x1: field(|r| &r.grad_x1)?,
            x1: field(|r| &r.x1)?,
            grad_h2: field(|r| &r.grad_h2)?,
            h2: field(|r| &r.h2)?,
            grad_gate_up: [
                field(|r| &r.grad_gate_up[0])?,
                field(|r| &r.grad_gate_up[1])?,
            ],
            gated: field(|r| &r.gated)?,
            grad_out: field(|r| &r.grad_out)?,
        })
    }

    /// The gradients of the layer's weights, in `named_parameters()` order, summed over
    /// the tokens these rows hold as chapter 22's `llama_backward` sums them.
    ///
    /// # Shapes
    /// Returns each weight's shape.
    // ANCHOR: layer_sums
    pub fn weight_gradients(&self, layer: &Layer) -> [Tensor; 9] {
        let linear = weight_gradient_in_pytorch_order;
        let [q, k, v] = &self.grad_qkv;
        let [gate, up] = &self.grad_gate_up;
        [
            norm_weight_gradient(&layer.attn_norm, &self.x, &self.grad_h),
            linear(&self.h, q),
            linear(&self.h, k),
            linear(&self.h, v),
            linear(&self.context, &self.grad_x1),
            norm_weight_gradient(&layer.ffn_norm, &self.x1, &self.grad_h2),
            linear(&self.h2, gate),
            linear(&self.h2, up),
            linear(&self.gated, &self.grad_out),
        ]
    }
    // ANCHOR_END: layer_sums
}

/// The pieces around the layers, token by token: what the token table's and the last
/// norm's gradients sum over.
#[derive(Clone, Debug)]
pub struct EndRows {
    /// The gradient of the looked-up rows, the first layer's input's.
    pub grad_lookup: Tensor,
    /// The last norm's input, the stream after the last layer.
    pub stream: Tensor,
    /// The gradient of the last norm's output.
    pub grad_normed: Tensor,
    /// The head's input, the last norm's output.
    pub normed: Tensor,
}

impl EndRows {
    /// Several ranks' rows combined field by field, as [`LayerRows::combine`].
    ///
    /// # Shapes
    /// As [`LayerRows::combine`].
    pub fn combine<E>(
        rows: &[EndRows],
        mut f: impl FnMut(&[Tensor]) -> Result<Tensor, E>,
    ) -> Result<EndRows, E> {
        let mut field = |get: fn(&EndRows) -> &Tensor| {
            f(&rows.iter().map(|r| get(r).clone()).collect::<Vec<_>>())
        };
        Ok(EndRows {
            grad_lookup: field(|r| &r.grad_lookup)?,
            stream: field(|r| &r.stream)?,
            grad_normed: field(|r| &r.grad_normed)?,
            normed: field(|r| &r.normed)?,
        })
    }
}

/// RMSNorm's weight gradient, `Σ_tokens grad_y·x̂`, from chapter 22's backward in
/// PyTorch's order. That call also returns the input's gradient for every token, which
/// is dropped: the ranks hold their rows of it already, and the weight's sum is then the
/// one-process function's by construction.
///
/// # Shapes
/// `x`, `grad_y`: `[batch, tokens, d]`; returns `[d]`.
fn norm_weight_gradient(norm: &RMSNorm, x: &Tensor, grad_y: &Tensor) -> Tensor {
    PytorchOrder::rms_norm_backward(norm, x, grad_y, None).weight
}

/// Every parameter's gradient, in `named_parameters()` order, from every token's pieces
/// in sequence order, as chapter 22's `llama_backward` sums them.
///
/// # Shapes
/// `ids`: `[batch, tokens]`; `grad_logits`: `[batch, tokens, vocab_size]`; the rows
/// `[batch, tokens, ..]`, one [`LayerRows`] per layer, the first first.
// ANCHOR: sums
pub fn gradients_from_rows(
    model: &Llama,
    ids: &Tensor<i64>,
    grad_logits: &Tensor,
    end: &EndRows,
    layers: &[LayerRows],
) -> Vec<Tensor> {
    // The table is the head too: the head's `grad_logitsᵀ·normed`, plus the rows
    // the lookup read.
    let head = weight_gradient_in_pytorch_order(&end.normed, grad_logits);
    let mut all = vec![tied_embedding_backward(&head, ids, &end.grad_lookup)];
    for (layer, rows) in model.layers.iter().zip(layers) {
        all.extend(rows.weight_gradients(layer));
    }
    all.push(norm_weight_gradient(
        &model.norm,
        &end.stream,
        &end.grad_normed,
    ));
    all
}
// ANCHOR_END: sums

/// How many numbers of pieces the sums take per token: the logits (for the loss), the
/// four [`EndRows`], and each layer's [`LayerRows`], twelve of the model's width and
/// three of the feed-forward network's.
///
/// # Shapes
/// Counts only.
pub fn numbers_per_token(config: &Config) -> usize {
    let (d, d_ff) = (config.d_model, config.swiglu_width());
    config.vocab_size + 4 * d + config.n_layers * (12 * d + 3 * d_ff)
}
