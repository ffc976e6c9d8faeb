//! Exercise: the attention scores of one query, one dot product at a time. Replace the
//! `todo!()`; test with `cargo test -p ch02-dot-product --features exercise attention_scores`.

use shared::Tensor;

/// The attention scores of one query against every input: `scores[i] = query · inputs[i]`.
///
/// # Shapes
/// `query`: `[d]`, `inputs`: `[n, d]`. Returns `[n]`.
pub fn attention_scores(query: &Tensor, inputs: &Tensor) -> Tensor {
    // TODO: make an [n] tensor, then loop over the rows of `inputs` and store the dot
    // product of `query` with row i at position i.
    let _ = (query, inputs);
    todo!("attention_scores")
}
