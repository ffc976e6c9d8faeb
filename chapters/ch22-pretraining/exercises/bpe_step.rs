//! One step of byte-pair encoding: your code (see `exercises/hints.md`).

/// The pair `(a, b)` with the largest `counts[a][b]`, or `None` when no pair occurs.
/// A tie goes to the smaller pair: the smaller `a`, then the smaller `b`.
///
/// # Shapes
/// `counts`: `[vocab][vocab]`.
pub fn most_frequent_pair(counts: &[Vec<u64>]) -> Option<(u32, u32)> {
    // TODO: walk the table and keep the pair with the largest count above zero;
    // decide how the order of your walk and your comparison give a tie to the smaller
    // pair.
    let _ = counts;
    todo!("most_frequent_pair")
}

/// `ids` with each occurrence of `pair` replaced by `new_id`, read left to right: in
/// `a a a` the pair `(a, a)` is merged once, at the start, giving `aa a`.
///
/// # Shapes
/// `ids`: `n` → at most `n`.
pub fn merge(ids: &[u32], pair: (u32, u32), new_id: u32) -> Vec<u32> {
    // TODO: build the merged ids: where `pair` starts, one `new_id` stands for both
    // of its tokens; everywhere else a token is kept as it is.
    let _ = (ids, pair, new_id);
    todo!("merge")
}
