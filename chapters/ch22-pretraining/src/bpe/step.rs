//! One step of byte-pair encoding: choose the pair to merge, and merge it.

// ANCHOR: most_frequent_pair
/// The pair `(a, b)` with the largest `counts[a][b]`, or `None` when no pair occurs.
/// A tie goes to the smaller pair: the smaller `a`, then the smaller `b` (Hugging
/// Face's trainer breaks ties the same way, so both learn the same merges).
///
/// # Shapes
/// `counts`: `[vocab][vocab]`.
pub fn most_frequent_pair(counts: &[Vec<u64>]) -> Option<(u32, u32)> {
    let mut best = None;
    let mut best_count = 0;
    for (a, row) in counts.iter().enumerate() {
        for (b, &count) in row.iter().enumerate() {
            // Strictly more: an equal count found later is a larger pair.
            if count > best_count {
                best = Some((a as u32, b as u32));
                best_count = count;
            }
        }
    }
    best
}
// ANCHOR_END: most_frequent_pair

// ANCHOR: merge
/// `ids` with each occurrence of `pair` replaced by `new_id`, read left to right: in
/// `a a a` the pair `(a, a)` is merged once, at the start, giving `aa a`.
///
/// # Shapes
/// `ids`: `n` → at most `n`.
pub fn merge(ids: &[u32], pair: (u32, u32), new_id: u32) -> Vec<u32> {
    let mut merged = Vec::with_capacity(ids.len());
    let mut i = 0;
    while i < ids.len() {
        if i + 1 < ids.len() && (ids[i], ids[i + 1]) == pair {
            merged.push(new_id);
            i += 2;
        } else {
            merged.push(ids[i]);
            i += 1;
        }
    }
    merged
}
// ANCHOR_END: merge
