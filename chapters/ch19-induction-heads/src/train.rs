//! Training: the forward pass, the loss on every next token, the backward pass through both
//! blocks and the residual stream, and AdamW.
//!
//! The backward pass is chapter 10's pieces in reverse order. The residual stream adds one
//! thing here: `x₁ = x₀ + block(x₀)` sends its gradient to `x₀` twice, once directly and
//! once through the block, and the two are added.

use ch07_multihead_split::heads::merge_heads;
use ch10_backward::heads::merge_heads_backward;
use ch10_backward::linear::LinearGrads;
use ch11_training::adamw::AdamW;
use ch11_training::embedding_backward::embedding_backward;
use shared::{Tensor, arange, cat, zeros};

use crate::arithmetic::Arithmetic;
use crate::data::{Repeats, TOKENS, VOCAB};
use crate::model::{AttentionOnly, Block, BlockTape, HEADS, Tape};
use crate::pytorch_order::PytorchOrder;

/// Sequences per training step: 64 · 32 = 2048 token rows.
pub const BATCH: usize = 64;
/// AdamW's learning rate.
pub const LR: f64 = 3e-3;

/// The gradients of one block's parameters and of its input.
pub struct BlockGrads {
    /// The fused `qkv` projection.
    pub qkv: LinearGrads,
    /// The output projection.
    pub proj: LinearGrads,
}

impl Block {
    /// The backward of [`Block::forward_taped`] (every head kept): the gradients of
    /// the parameters, and of the input in `qkv.input`.
    ///
    /// # Shapes
    /// `grad_out`: `[batch, tokens, D_MODEL]`.
    ///
    /// `A` is the arithmetic: [`crate::arithmetic::Formulas`], or [`PytorchOrder`] for
    /// PyTorch's bits.
    // ANCHOR: block_backward
    pub fn backward<A: Arithmetic>(
        &self,
        tape: &BlockTape,
        grad_out: &Tensor,
    ) -> BlockGrads {
        let proj = A::linear_backward(&self.proj, &tape.context, grad_out);
        let grad_heads = merge_heads_backward(&proj.input, HEADS);
        let core = A::attention_backward(&tape.attention, &grad_heads);
        // The fused projection's output was cut into queries, keys and values: their
        // gradients side by side again are the gradient of that output.
        let grad_qkv = cat(
            &[
                merge_heads(&core.queries),
                merge_heads(&core.keys),
                merge_heads(&core.values),
            ],
            2,
        );
        let qkv = A::linear_backward(&self.qkv, &tape.x, &grad_qkv);
        BlockGrads { qkv, proj }
    }
    // ANCHOR_END: block_backward
}

/// The gradient of every parameter, in `named_parameters` order.
pub struct Gradients(pub Vec<Tensor>);

impl AttentionOnly {
    /// The backward pass: from the gradient of the logits to every parameter's gradient.
    ///
    /// # Shapes
    /// `grad_out`: the gradient of the logits, `[batch, tokens, VOCAB]` as the logits of
    /// `tape`.
    // ANCHOR: backward
    pub fn backward<A: Arithmetic>(
        &self,
        tape: &Tape,
        grad_out: &Tensor,
    ) -> Gradients {
        let x = &tape.stream; // the residual stream the unembedding read
        let unembed = A::linear_backward(&self.unembed, x, grad_out);
        let mut grad_stream = unembed.input.clone();
        let mut block_grads = Vec::new();
        for (block, block_tape) in self.blocks.iter().zip(&tape.blocks).rev() {
            let grads = block.backward::<A>(block_tape, &grad_stream);
            // x_out = x_in + block(x_in): the direct path plus the block's path.
            grad_stream = &grad_stream + &grads.qkv.input;
            block_grads.push(grads);
        }
        block_grads.reverse();
        // x₀ = tok[ids] + pos[positions]; the position table was broadcast over the
        // batch, so its gradient is summed over it.
        let positions = arange(0, tape.ids.size(1), 1);
        let mut grads = vec![
            embedding_backward(&tape.ids, &grad_stream, VOCAB),
            embedding_backward(&positions, &grad_stream.sum_dim(0, false), TOKENS),
        ];
        for BlockGrads { qkv, proj } in block_grads {
            grads.extend([qkv, proj].into_iter().flat_map(weight_and_bias));
        }
        grads.extend(weight_and_bias(unembed));
        Gradients(grads)
    }
    // ANCHOR_END: backward
}

/// A layer's weight and bias gradients.
fn weight_and_bias(grads: LinearGrads) -> [Tensor; 2] {
    [grads.weight, grads.bias.expect("the layer has a bias")]
}

/// The loss of the batch `ids` (every next token) and every parameter's gradient.
///
/// # Shapes
/// `ids`: `[batch, tokens]`.
// ANCHOR: loss_and_gradients
pub fn loss_and_gradients<A: Arithmetic>(
    model: &AttentionOnly,
    ids: &Tensor<i64>,
) -> (f32, Gradients) {
    let (batch, tokens) = (ids.size(0), ids.size(1));
    let (logits, tape) = model.forward_with_tape(ids, None);
    // Position i predicts the token at i + 1: logits[:, :-1] against ids[:, 1:].
    let scored = logits.slice(1, ..tokens - 1).flatten(0, 1);
    let targets = ids.slice(1, 1..).reshape(&[-1]);
    let ce = A::cross_entropy(&scored, &targets);
    let grad_scored = A::cross_entropy_backward(&ce.log_probs, &targets);
    // The last position predicts nothing: its logits get a zero gradient.
    let grad_scored = grad_scored.view([batch, tokens - 1, VOCAB]);
    let grad_logits = cat(&[grad_scored, zeros(&[batch, 1, VOCAB])], 1);
    (ce.loss, model.backward::<A>(&tape, &grad_logits))
}
// ANCHOR_END: loss_and_gradients

/// The optimizer of the chapter: chapter 11's AdamW at learning rate [`LR`], no weight decay.
pub fn optimizer() -> AdamW {
    let mut adamw = AdamW::new(LR);
    adamw.weight_decay = 0.0;
    adamw
}

/// One step: forward, loss, backward, AdamW's update. Returns the loss before the update.
///
/// # Shapes
/// `ids`: `[batch, tokens]`.
// ANCHOR: train_step
pub fn train_step<A: Arithmetic>(
    model: &mut AttentionOnly,
    optimizer: &mut AdamW,
    ids: &Tensor<i64>,
) -> f32 {
    let (loss, Gradients(grads)) = loss_and_gradients::<A>(model, ids);
    let grads: Vec<&Tensor> = grads.iter().collect();
    optimizer.step_with(&mut model.parameters_mut(), &grads, A::adamw_update);
    loss
}
// ANCHOR_END: train_step

/// Trains `steps` steps, each on a fresh batch of [`BATCH`] sequences of `repeats` drawn
/// from the default generator; calls `on_step(step, loss, model)` after every step
/// (counted from 1). Returns the losses. The steps add in PyTorch's order, so the losses
/// are PyTorch's to the last bit.
// ANCHOR: train
pub fn train(
    model: &mut AttentionOnly,
    repeats: Repeats,
    steps: u32,
    mut on_step: impl FnMut(u32, f32, &AttentionOnly),
) -> Vec<f32> {
    let mut optimizer = optimizer();
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 1..=steps {
        let batch = repeats.draw(BATCH);
        let loss = train_step::<PytorchOrder>(model, &mut optimizer, &batch.ids);
        on_step(step, loss, model);
        losses.push(loss);
    }
    losses
}
// ANCHOR_END: train
