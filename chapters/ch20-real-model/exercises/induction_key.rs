//! Predicting an induction head. Exercise: see `cargo run -p learn -- hint ch20-real-model induction_key`.

/// The key an induction head at `query` attends to: the position right after the latest
/// earlier occurrence of the query's token, `None` if the token has not occurred before.
///
/// # Shapes
/// `ids`: one sequence of token ids, `query < ids.len()`.
pub fn induction_key(ids: &[i64], query: usize) -> Option<usize> {
    // TODO: find where the token at `query` occurred last before `query`, and return the
    // position after it.
    let _ = (ids, query);
    todo!("induction_key")
}
