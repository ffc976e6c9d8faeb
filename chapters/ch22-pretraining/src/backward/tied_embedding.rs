//! The tied embedding's backward: one table used twice, so two gradients, added.
//!
//! The token table is read at the start (row `ids[i]` for position `i`) and again at the
//! end as the head (`logits = x·tableᵀ`). A parameter used twice gets the sum of what each
//! use sends back: the head's gradient, `gᵀ·x`, a little of every position for every row,
//! plus the lookup's, rows of the stream's gradient added where their tokens were read.

use ch11_training::embedding_backward::embedding_backward;
use shared::Tensor;

/// The table's gradient: the head's plus the lookup's.
///
/// # Shapes
/// `grad_head`: `[vocab_size, d_model]`, the head's weight gradient; `ids`: `[batch,
/// tokens]`; `grad_lookup`: `[batch, tokens, d_model]`, the gradient of the looked-up
/// rows. Returns `[vocab_size, d_model]`.
// ANCHOR: tied_embedding_backward
pub fn tied_embedding_backward(
    grad_head: &Tensor,
    ids: &Tensor<i64>,
    grad_lookup: &Tensor,
) -> Tensor {
    let vocab_size = grad_head.size(0);
    grad_head + &embedding_backward(ids, grad_lookup, vocab_size)
}
// ANCHOR_END: tied_embedding_backward
