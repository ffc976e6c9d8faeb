//! The tied embedding's gradient: your code (see `exercises/hints.md`).

use shared::Tensor;

/// The token table's gradient, when the table is both the lookup at the start and the
/// head at the end.
///
/// # Shapes
/// `grad_head`: `[vocab_size, d_model]`, the head's weight gradient; `ids`: `[batch,
/// tokens]`; `grad_lookup`: `[batch, tokens, d_model]`, the gradient of the looked-up
/// rows. Returns `[vocab_size, d_model]`.
pub fn tied_embedding_backward(
    grad_head: &Tensor,
    ids: &Tensor<i64>,
    grad_lookup: &Tensor,
) -> Tensor {
    // TODO: the table is used twice; say what each use sends back to row v of the
    // table, then combine the two.
    let _ = (grad_head, ids, grad_lookup);
    todo!("tied_embedding_backward")
}
