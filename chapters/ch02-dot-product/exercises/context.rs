//! Exercise: the context vector of one query, one weighted term at a time. Replace the
//! `todo!()`; test with `cargo test -p ch02-dot-product --features exercise context_vector`.

use shared::Tensor;

/// The weighted sum of the inputs: `Σ_i weights[i] · inputs[i]`.
///
/// # Shapes
/// `weights`: `[n]`, `inputs`: `[n, d]`. Returns `[d]`.
pub fn context_vector(weights: &Tensor, inputs: &Tensor) -> Tensor {
    // TODO: start from a [d] vector of zeros and, for every row i of `inputs`, add
    // weights[i] times that row.
    let _ = (weights, inputs);
    todo!("context_vector")
}
