//! nanoGPT's training loop: the loss of a batch and every parameter's gradient, the
//! gradients clipped to a global norm of 1, AdamW with weight decay on the matrices only,
//! and a learning rate that warms up, then decays along a cosine.

use ch11_training::adamw::AdamW;
use shared::Tensor;

use crate::arithmetic::Arithmetic;
use crate::backward::gpt2::gpt2_backward;
use crate::backward::llama::llama_backward;
use crate::batches::{Batch, get_batch};
use crate::config::Config;
use crate::model::Model;

/// The settings of a run (nanoGPT's `shakespeare_char`).
#[derive(Clone, Copy, Debug, PartialEq)]
// ANCHOR: settings
pub struct Settings {
    /// The learning rate after the warm-up.
    pub lr: f64,
    /// The learning rate at the end of the decay, and after it.
    pub min_lr: f64,
    /// Steps of linear warm-up.
    pub warmup: u32,
    /// The step where the cosine decay ends.
    pub decay_steps: u32,
    /// AdamW's decoupled weight decay, on the matrices only.
    pub weight_decay: f64,
    /// AdamW's `β₁`, `β₂` (nanoGPT's `β₂ = 0.99`: small batches, noisy gradients).
    pub betas: (f64, f64),
    /// The largest global norm of the gradients.
    pub grad_clip: f32,
}
// ANCHOR_END: settings

impl Settings {
    /// nanoGPT's `shakespeare_char` for `steps` steps: lr 1e-3 down to 1e-4 over the run
    /// after 100 warm-up steps, weight decay 0.1, betas (0.9, 0.99), clip at 1.
    pub fn shakespeare(steps: u32) -> Settings {
        Settings {
            lr: 1e-3,
            min_lr: 1e-4,
            warmup: 100,
            decay_steps: steps,
            weight_decay: 0.1,
            betas: (0.9, 0.99),
            grad_clip: 1.0,
        }
    }

    /// The same for a short test run: 10 warm-up steps.
    pub fn short(steps: u32) -> Settings {
        Settings {
            warmup: 10,
            ..Settings::shakespeare(steps)
        }
    }

    /// The learning rate of step `step` (from 0): linear warm-up to `lr`, then a half
    /// cosine down to `min_lr` at `decay_steps`, then `min_lr`.
    // ANCHOR: lr_at
    pub fn lr_at(&self, step: u32) -> f64 {
        if step < self.warmup {
            return self.lr * f64::from(step + 1) / f64::from(self.warmup + 1);
        }
        if step > self.decay_steps {
            return self.min_lr;
        }
        let ratio =
            f64::from(step - self.warmup) / f64::from(self.decay_steps - self.warmup);
        let coeff = 0.5 * (1.0 + (std::f64::consts::PI * ratio).cos());
        self.min_lr + coeff * (self.lr - self.min_lr)
    }
    // ANCHOR_END: lr_at

    /// The optimizer: AdamW with these betas.
    pub fn optimizer(&self) -> AdamW {
        let mut adamw = AdamW::new(self.lr);
        adamw.betas = self.betas;
        adamw.weight_decay = self.weight_decay;
        adamw
    }
}

/// Each parameter's weight decay: `weight_decay` for the matrices (the embeddings and
/// the projections), 0 for the vectors (the norms' weights), nanoGPT's two groups.
pub fn weight_decays(model: &Model, weight_decay: f64) -> Vec<f64> {
    let decay = |p: &Tensor| if p.dim() >= 2 { weight_decay } else { 0.0 };
    model
        .named_parameters()
        .iter()
        .map(|(_, p)| decay(p))
        .collect()
}

/// The mean cross-entropy of the batch (every position predicts its next token) and the
/// gradient of every parameter, in `named_parameters()` order.
///
/// # Shapes
/// `batch`: `[batch, tokens]` inputs and targets.
// ANCHOR: loss_and_gradients
pub fn loss_and_gradients<A: Arithmetic>(
    model: &Model,
    batch: &Batch,
) -> (f32, Vec<Tensor>) {
    let targets = batch.y.reshape(&[-1]);
    let loss_and_grad = |logits: &Tensor| {
        let ce = A::cross_entropy(&logits.flatten(0, 1), &targets);
        let grad = A::cross_entropy_backward(&ce.log_probs, &targets);
        (ce.loss, grad.view(logits.sizes()))
    };
    match model {
        Model::Gpt2(m) => {
            let (logits, tape) = m.forward_with_tape(&batch.x);
            let (loss, grad) = loss_and_grad(&logits);
            (loss, gpt2_backward::<A>(m, &tape, &grad))
        }
        Model::Llama(m) => {
            let (logits, tape) = m.forward_with_tape(&batch.x);
            let (loss, grad) = loss_and_grad(&logits);
            (loss, llama_backward::<A>(m, &tape, &grad))
        }
    }
}
// ANCHOR_END: loss_and_gradients

/// The mean cross-entropy of the batch, without gradients.
///
/// # Shapes
/// `batch`: `[batch, tokens]` inputs and targets.
pub fn loss<A: Arithmetic>(model: &Model, batch: &Batch) -> f32 {
    let logits = model.forward(&batch.x);
    A::cross_entropy(&logits.flatten(0, 1), &batch.y.reshape(&[-1])).loss
}

/// Steps between two evaluations (nanoGPT's `eval_interval`).
pub const EVAL_INTERVAL: u32 = 250;

/// Validation batches per evaluation (nanoGPT's `eval_iters` for its baby GPT), the same
/// ones every time: [`crate::batches::fixed_batches`].
pub const EVAL_BATCHES: usize = 20;

/// The mean loss over `batches`, as nanoGPT's `estimate_loss` averages it (the losses in
/// a float32 tensor, then its mean).
///
/// # Shapes
/// `batches`: any number of `[batch, tokens]` inputs and targets.
// ANCHOR: evaluate
pub fn evaluate<A: Arithmetic>(model: &Model, batches: &[Batch]) -> f32 {
    let losses: Vec<f32> = batches.iter().map(|b| loss::<A>(model, b)).collect();
    let count = losses.len();
    Tensor::from_vec(losses, &[count]).mean().item()
}
// ANCHOR_END: evaluate

/// One training step at step `step` (from 0): the loss and gradients, the clip, AdamW at
/// this step's learning rate. Returns the loss before the update, or an error, before
/// any weight changes, when the loss or a gradient is not a finite number: the weights
/// have grown too far (a learning rate too large) and every later step would be NaN.
///
/// # Shapes
/// `batch`: `[batch, tokens]` inputs and targets.
// ANCHOR: train_step
pub fn train_step<A: Arithmetic>(
    model: &mut Model,
    optimizer: &mut AdamW,
    settings: &Settings,
    step: u32,
    batch: &Batch,
) -> shared::Result<f32> {
    let (loss, grads) = loss_and_gradients::<A>(model, batch);
    apply_gradients::<A>(model, optimizer, settings, step, loss, grads)?;
    Ok(loss)
}

/// The second half of [`train_step`], once the loss and gradients are known, however
/// they were computed: the check that they are finite, the clip, AdamW at step
/// `step`'s learning rate.
///
/// # Shapes
/// `grads`: in `named_parameters()` order, each the shape of its parameter.
pub fn apply_gradients<A: Arithmetic>(
    model: &mut Model,
    optimizer: &mut AdamW,
    settings: &Settings,
    step: u32,
    loss: f32,
    mut grads: Vec<Tensor>,
) -> shared::Result<()> {
    check_finite(model, step, settings.lr_at(step), loss, &grads)?;
    A::clip_grad_norm(&mut grads, settings.grad_clip);
    optimizer.lr = settings.lr_at(step);
    let decays = weight_decays(model, settings.weight_decay);
    let grads: Vec<&Tensor> = grads.iter().collect();
    optimizer.step_with_decays(
        &mut model.parameters_mut(),
        &grads,
        &decays,
        A::adamw_update,
    );
    Ok(())
}
// ANCHOR_END: train_step

/// An error naming the step, its learning rate and the largest gradient when the loss or
/// a gradient is NaN or infinite.
///
/// # Shapes
/// `grads`: in `named_parameters()` order.
fn check_finite(
    model: &Model,
    step: u32,
    lr: f64,
    loss: f32,
    grads: &[Tensor],
) -> shared::Result<()> {
    let finite = |v: &f32| v.is_finite();
    if loss.is_finite() && grads.iter().all(|g| g.to_vec().iter().all(finite)) {
        return Ok(());
    }
    // The largest gradient by size, a NaN counting as the largest of all.
    let size = |v: f32| if v.is_nan() { f32::INFINITY } else { v.abs() };
    let (name, largest) = model
        .named_parameters()
        .into_iter()
        .zip(grads)
        .flat_map(|((name, _), g)| {
            g.to_vec().into_iter().map(move |v| (name.clone(), v))
        })
        .fold((String::new(), 0.0f32), |best, (name, v)| {
            if size(v) > size(best.1) || best.0.is_empty() {
                (name, v)
            } else {
                best
            }
        });
    Err(shared::Error::InvalidArgument {
        op: "train_step",
        detail: format!(
            "the loss is {loss} at step {step} (learning rate {lr:e}); the largest \
             gradient is {largest:e}, in {name}: the weights have grown too far, try a \
             smaller learning rate"
        ),
    })
}

/// Trains `model` for `steps` steps from step 0, each on a fresh batch of
/// `config.batch` windows of `data` drawn from the default generator; calls
/// `on_step(step, loss)` after every step. Returns the losses.
///
/// # Shapes
/// `data`: token ids, more than `config.context` of them.
// ANCHOR: train
pub fn train<A: Arithmetic>(
    model: &mut Model,
    data: &[u32],
    config: &Config,
    settings: &Settings,
    steps: u32,
    mut on_step: impl FnMut(u32, f32),
) -> shared::Result<Vec<f32>> {
    model.check_context(config.context)?;
    let mut optimizer = settings.optimizer();
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 0..steps {
        let batch = get_batch(data, config.context, config.batch)?;
        let loss = train_step::<A>(model, &mut optimizer, settings, step, &batch)?;
        on_step(step, loss);
        losses.push(loss);
    }
    Ok(losses)
}
// ANCHOR_END: train

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learning_rate_warms_up_then_decays_along_a_cosine() {
        let s = Settings::short(60);
        assert_eq!(s.lr_at(0), 1e-3 / 11.0);
        assert_eq!(s.lr_at(9), 1e-3 * 10.0 / 11.0);
        assert_eq!(s.lr_at(10), 1e-3);
        let middle = s.lr_at(35);
        assert!((middle - 5.5e-4).abs() < 1e-12, "{middle}");
        assert_eq!(s.lr_at(60), 1e-4);
        assert_eq!(s.lr_at(61), 1e-4);
        for step in 10..60 {
            assert!(s.lr_at(step + 1) < s.lr_at(step), "step {step}");
        }
    }
}
