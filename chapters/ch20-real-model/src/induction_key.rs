//! Predicting an induction head: which key it looks at, from the tokens alone.

/// The key an induction head at `query` attends to: the position right after the latest
/// earlier occurrence of the query's token, `None` if the token has not occurred before.
///
/// # Shapes
/// `ids`: one sequence of token ids, `query < ids.len()`.
// ANCHOR: induction_key
pub fn induction_key(ids: &[i64], query: usize) -> Option<usize> {
    (0..query)
        .rev()
        .find(|&j| ids[j] == ids[query])
        .map(|j| j + 1)
}
// ANCHOR_END: induction_key
