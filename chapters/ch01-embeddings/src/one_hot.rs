//! An embedding lookup is a matrix product in disguise: write token `t` as a one-hot row
//! (all zeros but a 1 at place `t`), multiply by the table, and the product is row `t`.
//! That is why an embedding layer is sometimes called a linear layer without bias, and why
//! nobody computes it that way: the product spends `vocab_size` multiplications per number
//! to pick a row that the lookup reads directly.

use shared::{Tensor, eye};

use crate::answers::Agreement;

/// One row per id, all zeros except a 1 in column `ids[i]`: row `ids[i]` of the identity
/// matrix (`torch.nn.functional.one_hot(ids, vocab_size).float()`).
///
/// # Shapes
/// `ids`: `[n]` with ids in `0..vocab_size`. Returns `[n, vocab_size]`.
// ANCHOR: one_hot
pub fn one_hot(ids: &Tensor<i64>, vocab_size: usize) -> Tensor {
    eye(vocab_size).index_select(0, ids)
}
// ANCHOR_END: one_hot

/// The embedding lookup as a product: `one_hot(ids) · table`.
///
/// # Shapes
/// `table`: `[vocab_size, d]`, `ids`: `[n]`. Returns `[n, d]`.
// ANCHOR: lookup_by_matmul
pub fn lookup_by_matmul(table: &Tensor, ids: &Tensor<i64>) -> Tensor {
    one_hot(ids, table.size(0)).matmul(table)
}
// ANCHOR_END: lookup_by_matmul

/// The question: does `lookup_by_matmul` give the lookup's rows bit for bit, or only up to
/// rounding? (Think about what each term of each dot product is.)
// ANCHOR: predict_matmul_agreement
pub fn predict_matmul_agreement() -> Agreement {
    // Each output number is a sum of `vocab_size` products: one is `1 · table[t][j]`,
    // exact, and all others are `0 · x = 0`; adding zeros changes nothing.
    Agreement::BitForBit
}
// ANCHOR_END: predict_matmul_agreement
