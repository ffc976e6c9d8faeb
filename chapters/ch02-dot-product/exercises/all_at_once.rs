//! Exercise: every query at once, with two matrix products instead of loops. Replace each
//! `todo!()`; test with `cargo test -p ch02-dot-product --features exercise all_at_once`.

use shared::Tensor;

/// The scores of every input against every input.
///
/// # Shapes
/// `inputs`: `[n, d]`. Returns `[n, n]`: row `i` holds query `i`'s scores.
pub fn all_attention_scores(inputs: &Tensor) -> Tensor {
    // TODO: one matrix product whose entry (i, j) is the dot product of rows i and j.
    let _ = inputs;
    todo!("all_attention_scores")
}

/// The context vectors of every query.
///
/// # Shapes
/// `weights`: `[n, n]`, `inputs`: `[n, d]`. Returns `[n, d]`: row `i` is query `i`'s
/// context vector.
pub fn all_context_vectors(weights: &Tensor, inputs: &Tensor) -> Tensor {
    // TODO: one matrix product whose row i is Σ_j weights[i, j] · inputs[j].
    let _ = (weights, inputs);
    todo!("all_context_vectors")
}
