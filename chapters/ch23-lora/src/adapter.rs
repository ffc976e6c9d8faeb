//! The adapters of a whole model: one [`Lora`] beside each chosen projection of every
//! layer, their settings as PEFT's `LoraConfig` holds them, and the merge into the weights.

use ch15_modern_layer::TinyModel;
use shared::Tensor;

use crate::error::LoraError;
use crate::lora::Lora;
use crate::targets::Target;

/// The adapters' settings: PEFT's `LoraConfig(r, lora_alpha, target_modules)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoraConfig {
    /// The rank `r`.
    pub rank: usize,
    /// `alpha`: the update is scaled by `alpha / r`.
    pub alpha: f64,
    /// The adapted projections, in the layer's order, each once.
    pub targets: Vec<Target>,
}

impl LoraConfig {
    /// Settings from the command line's words: `targets` by their module names.
    pub fn new(
        rank: usize,
        alpha: f64,
        targets: &[impl AsRef<str>],
    ) -> Result<LoraConfig, LoraError> {
        if rank == 0 {
            return Err(LoraError::Settings(
                "a rank of 0 adapts nothing: choose --rank 1 or more".into(),
            ));
        }
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(LoraError::Settings(format!(
                "--alpha {alpha}: the scale alpha / r must be a positive number"
            )));
        }
        let mut parsed = targets
            .iter()
            .map(|t| Target::parse(t.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        if parsed.is_empty() {
            return Err(LoraError::Settings(
                "no target module: name at least one".into(),
            ));
        }
        parsed.sort();
        parsed.dedup();
        Ok(LoraConfig {
            rank,
            alpha,
            targets: parsed,
        })
    }
}

/// Every layer's adapters.
pub struct Adapter {
    /// The settings.
    pub config: LoraConfig,
    /// For each layer, the adapter of each target, in the config's order.
    pub layers: Vec<Vec<Lora>>,
}

/// Checks that `model` is a plain Llama, the model whose backward the chapter has.
pub fn check_model(model: &TinyModel) -> Result<(), LoraError> {
    for (i, layer) in model.layers.iter().enumerate() {
        let a = &layer.attn;
        if a.qk_norm.is_some() || a.sinks.is_some() || a.w_gate.is_some() {
            return Err(LoraError::Model(format!(
                "layer {i} has QK-norm, sinks or an output gate: the chapter's backward \
                 pass is the plain Llama layer's (SmolLM2's)"
            )));
        }
    }
    Ok(())
}

impl Adapter {
    /// New adapters for `model`, each `A` drawn from the default generator (the first
    /// layer's first, and within a layer in the targets' order), each `B` zero.
    ///
    /// # Shapes
    /// Each adapter of a `[d_out, d_in]` projection: `A` `[r, d_in]`, `B` `[d_out, r]`.
    pub fn new(model: &TinyModel, config: &LoraConfig) -> Result<Adapter, LoraError> {
        check_model(model)?;
        let first = model.layers.first().ok_or_else(|| {
            LoraError::Model("a model without layers has nothing to adapt".into())
        })?;
        for &target in &config.targets {
            let [d_out, d_in] = target.linear(first).weight.dims();
            if config.rank > d_in.min(d_out) {
                return Err(LoraError::Settings(format!(
                    "rank {} is larger than {} ({d_out} × {d_in}) can use: at most {}",
                    config.rank,
                    target.name(),
                    d_in.min(d_out)
                )));
            }
        }
        let layers = model
            .layers
            .iter()
            .map(|layer| {
                config
                    .targets
                    .iter()
                    .map(|&t| {
                        let [d_out, d_in] = t.linear(layer).weight.dims();
                        Lora::new(d_in, d_out, config.rank, config.alpha)
                    })
                    .collect()
            })
            .collect();
        Ok(Adapter {
            config: config.clone(),
            layers,
        })
    }

    /// Layer `layer`'s adapter beside `target`, if it has one.
    pub fn get(&self, layer: usize, target: Target) -> Option<&Lora> {
        let at = self.config.targets.iter().position(|&t| t == target)?;
        Some(&self.layers[layer][at])
    }

    /// Every trainable matrix with PEFT's name for it, in `named_parameters()` order:
    /// each layer's targets, `lora_A` then `lora_B`.
    pub fn named_parameters(&self) -> Vec<(String, &Tensor)> {
        let mut all = Vec::new();
        for (i, layer) in self.layers.iter().enumerate() {
            for (target, lora) in self.config.targets.iter().zip(layer) {
                let module =
                    format!("base_model.model.model.layers.{i}.{}", target.path());
                all.push((format!("{module}.lora_A.weight"), &lora.a));
                all.push((format!("{module}.lora_B.weight"), &lora.b));
            }
        }
        all
    }

    /// The same matrices, mutable, in the same order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        self.layers
            .iter_mut()
            .flatten()
            .flat_map(|lora| [&mut lora.a, &mut lora.b])
            .collect()
    }

    /// How many numbers train.
    // ANCHOR: trainable
    pub fn trainable(&self) -> usize {
        self.named_parameters().iter().map(|(_, p)| p.numel()).sum()
    }
    // ANCHOR_END: trainable

    /// Merges every adapter into its projection's weight (`W + scale · B A`): the model
    /// then computes, up to rounding, what it computed with the adapters beside it.
    pub fn merge_into(&self, model: &mut TinyModel) {
        for (layer, adapters) in model.layers.iter_mut().zip(&self.layers) {
            for (&target, lora) in self.config.targets.iter().zip(adapters) {
                let linear = target.linear_mut(layer);
                linear.weight = lora.merged(&linear.weight);
            }
        }
    }
}
