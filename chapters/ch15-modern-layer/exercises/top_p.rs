//! Exercise: top-p (nucleus) sampling. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise top_p`.

use shared::Tensor;

/// The softmax over the nucleus: sorted from the likeliest down, a token stays while the
/// tokens before it hold less than `p` of the probability; the others get 0.
///
/// # Shapes
/// `logits`: `[vocab]`, `0 < p <= 1`. Returns `[vocab]`.
pub fn top_p(logits: &Tensor, p: f32) -> Tensor {
    // TODO: the probabilities of the tokens that stay, renormalised, and 0 for the others.
    // From the likeliest token down, a token stays while the tokens before it hold less
    // than p of the probability: the likeliest always stays.
    let _ = (logits, p);
    todo!("top_p")
}
