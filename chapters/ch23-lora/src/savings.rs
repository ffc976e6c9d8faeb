//! What LoRA saves against fine-tuning the same projections in full. Every trained number
//! carries a gradient and AdamW's two moments, three float32 numbers beside it: trained in
//! full, a projection `[d_out, d_in]` carries `d_out · d_in` of each; with an adapter of
//! rank `r`, only `r · (d_in + d_out)`.

use crate::count::trainable_numbers;
use crate::setup::{SMOLLM2_D_FF, SMOLLM2_D_KV, SMOLLM2_D_MODEL, SMOLLM2_LAYERS};
use crate::targets::Target;

/// The bytes training adds beside each trained number: its gradient and AdamW's two
/// moments, in float32.
pub const BYTES_PER_TRAINED: usize = 3 * 4;

/// The numbers trained, with adapters and in full, for one choice of projections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trained {
    /// The adapters' `A` and `B`.
    pub lora: usize,
    /// The projections' own weights.
    pub full: usize,
}

/// The numbers trained by adapters of rank `rank` beside `projections` in each of
/// `n_layers` layers, and by the same projections trained in full.
///
/// # Shapes
/// `projections`: one `(d_out, d_in)` per adapted projection of a layer.
pub fn trained(
    rank: usize,
    n_layers: usize,
    projections: &[(usize, usize)],
) -> Trained {
    let per_layer: usize =
        projections.iter().map(|&(d_out, d_in)| d_out * d_in).sum();
    Trained {
        lora: trainable_numbers(rank, n_layers, projections),
        full: n_layers * per_layer,
    }
}

/// The shape `(d_out, d_in)` of SmolLM2-135M's projection `target`.
pub fn smollm2_shape(target: Target) -> (usize, usize) {
    let (d, kv, ff) = (SMOLLM2_D_MODEL, SMOLLM2_D_KV, SMOLLM2_D_FF);
    match target {
        Target::Query | Target::Output => (d, d),
        Target::Key | Target::Value => (kv, d),
        Target::Gate | Target::Up => (ff, d),
        Target::Down => (d, ff),
    }
}

/// Lines that compare, on SmolLM2-135M, adapters of rank `rank` beside `targets` with the
/// same projections trained in full: the numbers trained, and the memory their gradients
/// and AdamW's moments take.
pub fn report(rank: usize, targets: &[Target]) -> Vec<String> {
    let projections: Vec<(usize, usize)> =
        targets.iter().map(|&t| smollm2_shape(t)).collect();
    let names: Vec<&str> = targets.iter().map(|t| t.name()).collect();
    let t = trained(rank, SMOLLM2_LAYERS, &projections);
    let megabytes = |n: usize| (n * BYTES_PER_TRAINED) as f64 / 1e6;
    vec![
        format!(
            "{} (rank {rank}, {SMOLLM2_LAYERS} layers):",
            names.join(",")
        ),
        format!(
            "  LoRA:    {:>11} numbers train; gradients and moments {:>7.1} MB",
            t.lora,
            megabytes(t.lora)
        ),
        format!(
            "  in full: {:>11} numbers train; gradients and moments {:>7.1} MB ({:.0} times)",
            t.full,
            megabytes(t.full),
            t.full as f64 / t.lora as f64
        ),
    ]
}
