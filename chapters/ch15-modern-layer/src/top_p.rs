//! Top-p (nucleus) sampling (Holtzman et al., 2019, "The Curious Case of Neural Text
//! Degeneration"): keep the smallest set of likeliest tokens whose probability reaches
//! `p`, and renormalise.

use shared::Tensor;

/// The softmax over the nucleus: sorted from the likeliest down, a token stays while the
/// tokens before it hold less than `p` of the probability; the others get 0.
///
/// # Shapes
/// `logits`: `[vocab]`, `0 < p <= 1`. Returns `[vocab]`.
// ANCHOR: top_p
pub fn top_p(logits: &Tensor, p: f32) -> Tensor {
    let probs = logits.softmax(-1).to_vec();
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a])); // likeliest first
    let mut mass_before = vec![0.0f32; probs.len()];
    let mut cumulative = 0.0f64; // PyTorch's cumsum adds float32 in float64
    for &token in &order {
        cumulative += probs[token] as f64;
        mass_before[token] = cumulative as f32 - probs[token];
    }
    let mass_before = Tensor::from_vec(mass_before, logits.sizes());
    let dropped = mass_before.lt_scalar(p).logical_not();
    logits.masked_fill(&dropped, f32::NEG_INFINITY).softmax(-1)
}
// ANCHOR_END: top_p
