//! AdamW, written out as `torch.optim.AdamW` computes it on the CPU.
//!
//! Adam keeps, for every parameter, a running mean of its gradients `m` (the direction)
//! and of their squares `v` (the scale), and steps by `m / √v`: every parameter moves about
//! `lr` per step whatever the size of its gradient. AdamW also shrinks the weights a little
//! at every step ("decoupled weight decay"), separately from the gradient.
//!
//! The constants are Python floats (f64) in PyTorch; each is rounded to f32 where it meets a
//! float32 tensor, and [`StepConstants`] rounds them at the same places.

use shared::Tensor;

#[cfg_attr(feature = "exercise", path = "../../exercises/adamw_update.rs")]
mod update;
pub use update::adamw_update;

/// `torch.optim.AdamW(params, lr)` with PyTorch's defaults for everything else.
#[derive(Clone, Debug)]
pub struct AdamW {
    /// The learning rate, the size of a step.
    pub lr: f64,
    /// `β₁`, `β₂`: how slowly the means of the gradients and of their squares forget.
    pub betas: (f64, f64),
    /// Added to `√v` so a parameter whose gradients were all 0 does not divide by 0.
    pub eps: f64,
    /// The decoupled weight decay: each step multiplies the weights by `1 − lr · wd`.
    pub weight_decay: f64,
    /// Steps taken so far.
    pub steps: u32,
    /// `m` and `v` of every parameter, in the order `step` receives them.
    moments: Vec<(Vec<f32>, Vec<f32>)>,
}

/// The per-step numbers of the update, rounded to f32 where PyTorch rounds them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepConstants {
    /// `1 − lr · weight_decay`.
    pub decay: f32,
    /// `β₁`: how much of the old `m` it keeps.
    pub beta1: f32,
    /// `1 − β₁`: how much of the new gradient goes into `m`.
    pub one_minus_beta1: f32,
    /// `β₂`.
    pub beta2: f32,
    /// `1 − β₂`: how much of the new squared gradient goes into `v`.
    pub one_minus_beta2: f32,
    /// `√(1 − β₂ᵗ)`: undoes `v`'s bias towards its zero start.
    pub bias_correction2_sqrt: f32,
    /// `−lr / (1 − β₁ᵗ)`: the step, with `m`'s bias undone.
    pub neg_step_size: f32,
    /// `eps`.
    pub eps: f32,
}

impl AdamW {
    /// `AdamW(params, lr=lr)`: betas (0.9, 0.999), eps 1e-8, weight decay 0.01.
    pub fn new(lr: f64) -> AdamW {
        AdamW {
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.01,
            steps: 0,
            moments: Vec::new(),
        }
    }

    /// `m` and `v` of every parameter, in the order `step` receives them (none before the
    /// first step): with `steps`, what a checkpoint keeps of the optimizer.
    pub fn moments(&self) -> &[(Vec<f32>, Vec<f32>)] {
        &self.moments
    }

    /// Puts back the step count and moments a checkpoint kept, so the next step is the one
    /// an uninterrupted run would take.
    pub fn restore(&mut self, steps: u32, moments: Vec<(Vec<f32>, Vec<f32>)>) {
        self.steps = steps;
        self.moments = moments;
    }

    /// The constants of step `t` (counted from 1), computed in f64 as PyTorch's Python
    /// code computes them, then rounded to f32.
    // ANCHOR: step_constants
    pub fn constants(&self, t: u32) -> StepConstants {
        self.constants_with_decay(t, self.weight_decay)
    }

    /// [`constants`](Self::constants) for a parameter group with its own weight decay.
    pub fn constants_with_decay(&self, t: u32, weight_decay: f64) -> StepConstants {
        let (beta1, beta2) = self.betas;
        let bias_correction1 = 1.0 - beta1.powf(f64::from(t));
        let bias_correction2 = 1.0 - beta2.powf(f64::from(t));
        StepConstants {
            decay: (1.0 - self.lr * weight_decay) as f32,
            beta1: beta1 as f32,
            one_minus_beta1: (1.0 - beta1) as f32,
            beta2: beta2 as f32,
            one_minus_beta2: (1.0 - beta2) as f32,
            bias_correction2_sqrt: bias_correction2.sqrt() as f32,
            neg_step_size: (-(self.lr / bias_correction1)) as f32,
            eps: self.eps as f32,
        }
    }
    // ANCHOR_END: step_constants

    /// `optimizer.step()`: updates every parameter in place from its gradient.
    ///
    /// # Shapes
    /// `params[i]` and `grads[i]` have the same shape; the same parameters, in the same
    /// order, at every step.
    pub fn step(&mut self, params: &mut [&mut Tensor], grads: &[&Tensor]) {
        self.step_with(params, grads, adamw_update);
    }

    /// [`step`](Self::step) with another rule for one entry's update, such as
    /// [`adamw_update_in_pytorch_order`](crate::pytorch_order::adamw_update_in_pytorch_order)
    /// for a run that must keep PyTorch's bits for thousands of steps.
    ///
    /// # Shapes
    /// As [`step`](Self::step).
    pub fn step_with(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[&Tensor],
        update: fn(&mut f32, f32, &mut f32, &mut f32, &StepConstants),
    ) {
        let decays = vec![self.weight_decay; params.len()];
        self.step_with_decays(params, grads, &decays, update);
    }

    /// [`step_with`](Self::step_with) with PyTorch's parameter groups: each parameter
    /// decays by its own `weight_decays[i]` (nanoGPT decays the matrices and not the
    /// norms' weights), and every other setting is shared.
    ///
    /// # Shapes
    /// As [`step`](Self::step); `weight_decays`: one per parameter.
    pub fn step_with_decays(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[&Tensor],
        weight_decays: &[f64],
        update: fn(&mut f32, f32, &mut f32, &mut f32, &StepConstants),
    ) {
        assert_eq!(
            params.len(),
            weight_decays.len(),
            "AdamW::step: {} parameters but {} weight decays",
            params.len(),
            weight_decays.len()
        );
        assert_eq!(
            params.len(),
            grads.len(),
            "AdamW::step: {} parameters but {} gradients",
            params.len(),
            grads.len()
        );
        if self.moments.is_empty() {
            self.moments = params
                .iter()
                .map(|p| (vec![0.0; p.numel()], vec![0.0; p.numel()]))
                .collect();
        }
        self.steps += 1;
        let constants: Vec<StepConstants> = weight_decays
            .iter()
            .map(|&decay| self.constants_with_decay(self.steps, decay))
            .collect();
        let all = params.iter_mut().zip(grads).zip(&constants);
        for (((param, grad), constants), (m, v)) in all.zip(&mut self.moments) {
            assert_eq!(
                param.sizes(),
                grad.sizes(),
                "AdamW::step: a parameter of shape {:?} got a gradient of shape {:?}",
                param.sizes(),
                grad.sizes()
            );
            let mut values = param.to_vec();
            for (((p, g), m), v) in values
                .iter_mut()
                .zip(grad.to_vec())
                .zip(m.iter_mut())
                .zip(v.iter_mut())
            {
                update(p, g, m, v, constants);
            }
            **param = Tensor::from_vec(values, param.sizes());
        }
    }
}
