//! Exercise: the gradient of an embedding table. Replace the `todo!()`; test with
//! `cargo test -p ch11-training --features exercise embedding_backward`.

use shared::Tensor;

/// The gradient of `Embedding::forward(ids)`'s table: each position's gradient added to
/// the row it looked up, in the order of the ids, into a table of zeros.
///
/// # Shapes
/// `ids`: `[..]` of ids in `0..num_embeddings`, `grad_out`: `[.., dim]`.
/// Returns `[num_embeddings, dim]`.
pub fn embedding_backward(
    ids: &Tensor<i64>,     // the token ids that were looked up
    grad_out: &Tensor,     // the gradient of the looked-up rows, [.., dim]
    num_embeddings: usize, // the rows of the table
) -> Tensor {
    // TODO: start from zeros [num_embeddings, dim]; for position i (row-major), add
    // grad_out's row i to the row ids[i].
    let _ = (ids, grad_out, num_embeddings);
    todo!("embedding_backward")
}
