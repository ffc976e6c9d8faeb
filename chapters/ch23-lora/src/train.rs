//! Fine-tuning: the loss on the answers, the adapters' gradients, AdamW on the adapters
//! alone.

use ch11_training::adamw::AdamW;
use ch15_modern_layer::{Recipe, TinyModel};
use ch22_pretraining::arithmetic::Arithmetic;
use shared::Tensor;

use crate::adapter::Adapter;
use crate::backward::backward;
use crate::error::LoraError;
use crate::examples::{self, Batch, Encoder};
use crate::forward::forward_with_tape;
use crate::masked_loss::answer_loss;
use crate::task::{Sum, draw_batch};

/// The loss of a batch on its answers and every adapter matrix's gradient, in
/// [`Adapter::named_parameters`] order.
///
/// # Shapes
/// `batch`: `[batch, tokens]` ids and labels.
// ANCHOR: loss_and_gradients
pub fn loss_and_gradients<A: Arithmetic>(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &Adapter,
    batch: &Batch,
) -> Result<(f32, Vec<Tensor>), LoraError> {
    let (logits, tape) = forward_with_tape(model, recipe, adapter, &batch.ids);
    let (loss, grad_logits) = answer_loss::<A>(&logits, &batch.labels)?;
    Ok((
        loss,
        backward::<A>(model, recipe, adapter, &tape, &grad_logits),
    ))
}
// ANCHOR_END: loss_and_gradients

/// One step: the loss and gradients, then AdamW on the adapters. Returns the loss before
/// the update, or an error, before anything changes, when the loss or a gradient is not a
/// finite number.
///
/// # Shapes
/// `batch`: `[batch, tokens]` ids and labels.
// ANCHOR: train_step
pub fn train_step<A: Arithmetic>(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &mut Adapter,
    optimizer: &mut AdamW,
    batch: &Batch,
) -> Result<f32, LoraError> {
    let (loss, grads) = loss_and_gradients::<A>(model, recipe, adapter, batch)?;
    check_finite(adapter, optimizer.steps, loss, &grads)?;
    let grads: Vec<&Tensor> = grads.iter().collect();
    optimizer.step_with(&mut adapter.parameters_mut(), &grads, A::adamw_update);
    Ok(loss)
}
// ANCHOR_END: train_step

/// An error naming the step, the loss and the first matrix with a NaN or infinite
/// gradient, when there is one.
fn check_finite(
    adapter: &Adapter,
    step: u32,
    loss: f32,
    grads: &[Tensor],
) -> Result<(), LoraError> {
    let bad = adapter
        .named_parameters()
        .into_iter()
        .zip(grads)
        .find(|(_, g)| g.to_vec().iter().any(|v| !v.is_finite()));
    if loss.is_finite() && bad.is_none() {
        return Ok(());
    }
    let where_ = bad.map_or(String::new(), |((name, _), _)| {
        format!("; the gradient of {name} is not finite")
    });
    Err(LoraError::NotFinite(format!(
        "train_step: the loss is {loss} at step {step}{where_}: the adapters have grown \
         too far, try a smaller learning rate (--lr)"
    )))
}

/// The learning rate of each step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    /// The same rate at every step (the runs checked against the reference's losses).
    Constant(f64),
    /// From `lr` down to 0 in a straight line over `steps` steps: transformers' `Trainer`
    /// default (and so TRL's), which lets the last steps settle instead of jumping about.
    Linear {
        /// The first step's rate.
        lr: f64,
        /// The whole run's steps.
        steps: u32,
    },
}

impl Schedule {
    /// The rate of step `step` (counted from 0), computed as PyTorch's `LambdaLR` does:
    /// the first rate times `(steps - step) / steps`.
    pub fn lr(self, step: u32) -> f64 {
        match self {
            Schedule::Constant(lr) => lr,
            Schedule::Linear { lr, steps } => {
                lr * (f64::from(steps.saturating_sub(step)) / f64::from(steps.max(1)))
            }
        }
    }
}

/// Fine-tunes `adapter` for `steps` steps, each on `batch` training sums drawn from the
/// default generator ([`draw_batch`]), AdamW at the rate `schedule` gives its step count;
/// calls `on_step(step, loss)` after every step. Returns the losses. The optimizer lives
/// outside: a run cut into pieces (to measure the accuracy between them) keeps its
/// moments and its place in the schedule.
///
/// # Shapes
/// `train`: the training sums, any number.
// ANCHOR: run
#[allow(clippy::too_many_arguments)] // the model, adapters, sums and optimizer
pub fn run<A: Arithmetic>(
    model: &TinyModel,
    recipe: &Recipe,
    adapter: &mut Adapter,
    encoder: &Encoder,
    train: &[Sum],
    optimizer: &mut AdamW,
    (steps, batch, schedule): (u32, usize, Schedule),
    mut on_step: impl FnMut(u32, f32),
) -> Result<Vec<f32>, LoraError> {
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 0..steps {
        let examples = draw_batch(train, batch)
            .iter()
            .map(|s| encoder.example(s))
            .collect::<Result<Vec<_>, _>>()?;
        let batch = examples::batch(&examples, encoder.eos);
        optimizer.lr = schedule.lr(optimizer.steps);
        let loss = train_step::<A>(model, recipe, adapter, optimizer, &batch)?;
        on_step(step, loss);
        losses.push(loss);
    }
    Ok(losses)
}
// ANCHOR_END: run
