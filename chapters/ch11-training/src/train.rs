//! One training step (forward, loss, backward, update) and the training loop.
//!
//! The backward pass runs the forward pass's steps in reverse, each turning the gradient of
//! its output into the gradients of its inputs and parameters: the loss's (this chapter),
//! the head's and the attention's (chapter 10), the embeddings' (this chapter).

use ch10_backward::linear::linear_backward;
use ch10_backward::multihead::{
    MultiHeadTape, multihead_backward, multihead_forward,
};
use shared::nn::Linear;
use shared::{Tensor, arange};

use crate::adamw::AdamW;
use crate::cross_entropy::{cross_entropy, cross_entropy_backward};
use crate::embedding_backward::embedding_backward;
use crate::model::AttentionModel;
use crate::task::{TOKENS, Task, VOCAB};

/// Sequences per training step: 16 · 8 = 128 token rows.
pub const BATCH: usize = 16;
/// AdamW's learning rate.
pub const LR: f64 = 1e-2;

/// What the forward pass keeps for the backward pass.
pub struct Tape {
    /// The token ids, `[batch, tokens]`.
    pub ids: Tensor<i64>,
    /// The attention's input, `[batch, tokens, D_MODEL]`.
    pub embedded: Tensor,
    /// The attention's own record (chapter 10).
    pub attention: MultiHeadTape,
    /// The attention's output, the head's input, `[batch, tokens, D_MODEL]`.
    pub attended: Tensor,
}

/// The gradient of every parameter, in `named_parameters` order (see
/// [`AttentionModel::named_parameters`]).
pub struct Gradients(pub Vec<Tensor>);

impl AttentionModel {
    /// The forward pass, keeping what the backward pass needs.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]` with `tokens <= TOKENS`. Returns the logits
    /// `[batch, tokens, VOCAB]` and the tape.
    // ANCHOR: forward
    pub fn forward_with_tape(&self, ids: &Tensor<i64>) -> (Tensor, Tape) {
        let embedded = self.embed(ids);
        let (attended, attention) = multihead_forward(&self.attn, &embedded);
        let logits = self.head.forward(&attended);
        let tape = Tape {
            ids: ids.clone(),
            embedded,
            attention,
            attended,
        };
        (logits, tape)
    }
    // ANCHOR_END: forward

    /// The logits alone.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, VOCAB]`.
    pub fn forward(&self, ids: &Tensor<i64>) -> Tensor {
        self.forward_with_tape(ids).0
    }

    /// The attention weights of every sequence and head (chapter 10's tape keeps them).
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, HEADS, tokens, tokens]`.
    pub fn attention_weights(&self, ids: &Tensor<i64>) -> Tensor {
        let (_, tape) = self.forward_with_tape(ids);
        tape.attention.attention.weights
    }

    /// The backward pass: from the gradient of the logits to every parameter's gradient.
    ///
    /// # Shapes
    /// `grad_logits`: `[batch, tokens, VOCAB]`, as the logits of `tape`.
    // ANCHOR: backward
    pub fn backward(&self, tape: &Tape, grad_logits: &Tensor) -> Gradients {
        let head = linear_backward(&self.head, &tape.attended, grad_logits);
        let attn = multihead_backward(&self.attn, &tape.attention, &head.input);
        // x = tok_emb(ids) + pos_emb(positions): the sum passes its gradient to both; the
        // position table was broadcast over the batch, so its gradient is summed over it.
        let grad_x = &attn.input;
        let tokens = tape.ids.size(1);
        let positions = arange(0, tokens, 1);
        let grad_tok = embedding_backward(&tape.ids, grad_x, VOCAB);
        let grad_pos =
            embedding_backward(&positions, &grad_x.sum_dim(0, false), TOKENS);
        let bias = |g: Option<Tensor>| g.expect("the layer has a bias");
        Gradients(vec![
            grad_tok,
            grad_pos,
            attn.w_query.weight,
            attn.w_key.weight,
            attn.w_value.weight,
            attn.out_proj.weight,
            bias(attn.out_proj.bias),
            head.weight,
            bias(head.bias),
        ])
    }
    // ANCHOR_END: backward

    /// Every parameter, mutable, in `named_parameters` order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let AttentionModel {
            tok_emb,
            pos_emb,
            attn,
            head,
        } = self;
        let [out_proj_weight, out_proj_bias] = weight_and_bias(&mut attn.out_proj);
        let [head_weight, head_bias] = weight_and_bias(head);
        vec![
            &mut tok_emb.weight,
            &mut pos_emb.weight,
            &mut attn.w_query.weight,
            &mut attn.w_key.weight,
            &mut attn.w_value.weight,
            out_proj_weight,
            out_proj_bias,
            head_weight,
            head_bias,
        ]
    }
}

/// The weight and the bias of a layer made with one (`out_proj` and the head).
fn weight_and_bias(layer: &mut Linear) -> [&mut Tensor; 2] {
    let Linear { weight, bias } = layer;
    [weight, bias.as_mut().expect("made with a bias")]
}

/// The loss of the batch `ids` and the gradient of every parameter: the forward pass, the
/// loss, and the backward pass, without updating anything.
///
/// # Shapes
/// `ids`: `[batch, tokens]`.
// ANCHOR: loss_and_gradients
pub fn loss_and_gradients(
    model: &AttentionModel,
    task: Task,
    ids: &Tensor<i64>,
) -> (f32, Gradients) {
    let (logits, tape) = model.forward_with_tape(ids);
    let targets = task.targets(ids);
    let ce = cross_entropy(&task.scored_logits(&logits), &targets);
    let grad_scored = cross_entropy_backward(&ce.log_probs, &targets);
    let (batch, tokens) = (ids.size(0), ids.size(1));
    let grad_logits = task.scored_logits_backward(&grad_scored, batch, tokens);
    (ce.loss, model.backward(&tape, &grad_logits))
}
// ANCHOR_END: loss_and_gradients

/// One step of training on the batch `ids`: forward, loss, backward, AdamW's update.
/// Returns the loss before the update, as `loss.item()` after `loss.backward()`.
///
/// # Shapes
/// `ids`: `[batch, tokens]`.
// ANCHOR: train_step
pub fn train_step(
    model: &mut AttentionModel,
    optimizer: &mut AdamW,
    task: Task,
    ids: &Tensor<i64>,
) -> f32 {
    let (loss, Gradients(grads)) = loss_and_gradients(model, task, ids);
    let grads: Vec<&Tensor> = grads.iter().collect();
    optimizer.step(&mut model.parameters_mut(), &grads);
    loss
}
// ANCHOR_END: train_step

/// Trains `steps` steps, each on a fresh batch of [`BATCH`] sequences drawn from the
/// default generator, with AdamW at learning rate [`LR`]. Calls `on_step(step, loss)`
/// after every step (counted from 1) and returns the losses.
// ANCHOR: train
pub fn train(
    model: &mut AttentionModel,
    task: Task,
    steps: u32,
    mut on_step: impl FnMut(u32, f32),
) -> Vec<f32> {
    let mut optimizer = AdamW::new(LR);
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 1..=steps {
        let ids = task.draw_batch(BATCH);
        let loss = train_step(model, &mut optimizer, task, &ids);
        on_step(step, loss);
        losses.push(loss);
    }
    losses
}
// ANCHOR_END: train
