//! Attention scores for one query: how well the query matches each input, measured by a
//! dot product.
//!
//! The dot product `q · x = Σ_k q_k x_k` is large when the two vectors point the same way
//! and are long, near zero when they are unrelated, and negative when they point apart. So
//! it works as a similarity, and it costs one multiply-add per dimension.

use shared::{Tensor, empty};

/// The attention scores of one query against every input, one dot product at a time:
/// `scores[i] = query · inputs[i]`, as the article's loop over `enumerate(inputs)`.
///
/// # Shapes
/// `query`: `[d]`, `inputs`: `[n, d]`. Returns `[n]`: one score per input.
// ANCHOR: attention_scores
pub fn attention_scores(query: &Tensor, inputs: &Tensor) -> Tensor {
    let mut scores = empty(&[inputs.size(0)]);
    for (i, x_i) in inputs.iter().enumerate() {
        scores.set(&[i], query.dot(&x_i).item());
    }
    scores
}
// ANCHOR_END: attention_scores
