//! The backward pass of an embedding lookup.
//!
//! `embed(ids)` copies row `ids[i]` of the table to position `i`, so the gradient of the
//! table's row `r` is the sum of the gradients of every position that looked up `r`; rows
//! nobody looked up get zero.

use shared::{Tensor, zeros};

/// The gradient of `Embedding::forward(ids)`'s table: the output gradients added into a
/// table of zeros, row by row, in the order of the ids (row-major), as PyTorch adds them.
///
/// # Shapes
/// `ids`: `[..]` (any shape) of ids in `0..num_embeddings`, `grad_out`: `[.., dim]`.
/// Returns `[num_embeddings, dim]`.
// ANCHOR: embedding_backward
pub fn embedding_backward(
    ids: &Tensor<i64>,     // the token ids that were looked up
    grad_out: &Tensor,     // the gradient of the looked-up rows, [.., dim]
    num_embeddings: usize, // the rows of the table
) -> Tensor {
    let dim = grad_out.size(-1);
    assert!(
        grad_out.sizes()[..grad_out.dim() - 1] == *ids.sizes(),
        "embedding_backward: grad_out must be [.., dim] with ids' shape in \
         front, got ids {:?} and grad_out {:?}",
        ids.sizes(),
        grad_out.sizes()
    );
    let grad_rows = grad_out.to_vec();
    let mut grad = zeros(&[num_embeddings, dim]).to_vec();
    for (position, id) in ids.to_vec().into_iter().enumerate() {
        let row = id as usize;
        for j in 0..dim {
            grad[row * dim + j] += grad_rows[position * dim + j];
        }
    }
    Tensor::from_vec(grad, &[num_embeddings, dim])
}
// ANCHOR_END: embedding_backward
