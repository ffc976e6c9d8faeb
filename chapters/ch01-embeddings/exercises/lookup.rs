//! Exercise: the forward pass of an embedding layer. Replace the `todo!()`; test with
//! `cargo test -p ch01-embeddings --features exercise lookup`.

use shared::Tensor;

/// Picks row `ids[i]` of `table` for every id.
///
/// # Shapes
/// `table`: `[vocab_size, d]`, `ids`: `[n]`. Returns `[n, d]`.
pub fn lookup(table: &Tensor, ids: &Tensor<i64>) -> Tensor {
    // TODO: take the row of `table` for each id and stack the rows into an [n, d] tensor.
    let _ = (table, ids);
    todo!("lookup")
}
