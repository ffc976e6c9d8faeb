//! The context vector of one query: the inputs mixed in proportion to their attention
//! weights, `z = Σ_i weights[i] · inputs[i]`.
//!
//! With weights that are positive and add up to 1 this is an average of the inputs in which
//! the inputs most similar to the query count most: the query's vector enriched with what
//! the rest of the sentence says.

use shared::{Tensor, zeros};

/// The weighted sum of the inputs, one term at a time, as the article's loop.
///
/// # Shapes
/// `weights`: `[n]`, `inputs`: `[n, d]`. Returns `[d]`: one vector like each input.
// ANCHOR: context_vector
pub fn context_vector(weights: &Tensor, inputs: &Tensor) -> Tensor {
    let mut context = zeros(&[inputs.size(1)]);
    for (i, x_i) in inputs.iter().enumerate() {
        context += &weights.get(i) * &x_i;
    }
    context
}
// ANCHOR_END: context_vector
