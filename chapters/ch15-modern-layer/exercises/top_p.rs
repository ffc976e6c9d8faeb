//! Exercise: top-p (nucleus) sampling. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise top_p`.

use shared::Tensor;

/// The softmax over the nucleus: sorted from the likeliest down, a token stays while the
/// tokens before it hold less than `p` of the probability; the others get 0.
///
/// # Shapes
/// `logits`: `[vocab]`, `0 < p <= 1`. Returns `[vocab]`.
pub fn top_p(logits: &Tensor, p: f32) -> Tensor {
    // TODO: probabilities = softmax of the logits; visit the tokens from the likeliest
    // down, adding up the probability of the tokens already visited; a token whose
    // "mass before" reaches p is dropped (its logit set to -inf); softmax again.
    let _ = (logits, p);
    todo!("top_p")
}
