//! Exercise: an embedding lookup written as a matrix product, and a prediction. Replace the
//! `todo!()`s; test with `cargo test -p ch01-embeddings --features exercise one_hot`.

use shared::Tensor;

use crate::answers::Agreement;

/// One row per id, all zeros except a 1 in column `ids[i]`.
///
/// # Shapes
/// `ids`: `[n]` with ids in `0..vocab_size`. Returns `[n, vocab_size]`.
pub fn one_hot(ids: &Tensor<i64>, vocab_size: usize) -> Tensor {
    // TODO: a row of zeros with a single 1 for every id.
    let _ = (ids, vocab_size);
    todo!("one_hot")
}

/// The embedding lookup as a product: `one_hot(ids) · table`.
///
/// # Shapes
/// `table`: `[vocab_size, d]`, `ids`: `[n]`. Returns `[n, d]`.
pub fn lookup_by_matmul(table: &Tensor, ids: &Tensor<i64>) -> Tensor {
    // TODO: multiply the one-hot rows by the table.
    let _ = (table, ids);
    todo!("lookup_by_matmul")
}

/// The question: does `lookup_by_matmul` give the lookup's rows bit for bit, or only up to
/// rounding? (Think about what each term of each dot product is.)
pub fn predict_matmul_agreement() -> Agreement {
    // TODO: your prediction.
    todo!("predict_matmul_agreement")
}
