//! What an embedding layer does: look up one row of its table per token id.

use shared::{Tensor, stack};

/// Picks row `ids[i]` of `table` for every id: the forward pass of `nn.Embedding`
/// written out. (`shared::nn::Embedding::forward` does the same in one call.)
///
/// # Shapes
/// `table`: `[vocab_size, d]`, `ids`: `[n]` with ids in `0..vocab_size`. Returns `[n, d]`.
// ANCHOR: lookup
pub fn lookup(table: &Tensor, ids: &Tensor<i64>) -> Tensor {
    // One row of the table per id, in the order of the ids.
    let rows: Vec<Tensor> = ids.to_vec().iter().map(|&id| table.get(id)).collect();
    stack(&rows, 0)
}
// ANCHOR_END: lookup
