//! Every query at once: the loops of [`crate::scores`] and [`crate::context`] are matrix
//! products.
//!
//! Row `i` of `inputs · inputsᵀ` holds the dot products of input `i` with every input: the
//! scores of query `i`. And row `i` of `weights · inputs` is `Σ_j weights[i, j] · inputs[j]`:
//! the context vector of query `i`. One matrix product replaces `n` loops (and runs on fast,
//! vectorised kernels), which is why attention is always written this way.

use shared::Tensor;

/// The scores of every input against every input: `inputs · inputsᵀ`.
///
/// # Shapes
/// `inputs`: `[n, d]`. Returns `[n, n]`: row `i` holds query `i`'s scores.
// ANCHOR: all_attention_scores
pub fn all_attention_scores(inputs: &Tensor) -> Tensor {
    inputs.matmul(&inputs.t())
}
// ANCHOR_END: all_attention_scores

/// The context vectors of every query: `weights · inputs`.
///
/// # Shapes
/// `weights`: `[n, n]` (row `i` the weights of query `i`), `inputs`: `[n, d]`.
/// Returns `[n, d]`: row `i` is query `i`'s context vector.
// ANCHOR: all_context_vectors
pub fn all_context_vectors(weights: &Tensor, inputs: &Tensor) -> Tensor {
    weights.matmul(inputs)
}
// ANCHOR_END: all_context_vectors
