//! Exercise: from a sentence to token ids. Replace each `todo!()`; the tests in
//! `tests/` check your code against PyTorch's numbers:
//! `cargo test -p ch01-embeddings --features exercise`.

use std::collections::BTreeMap;

use shared::Tensor;

/// Numbers the distinct words of `sentence` (commas removed) in sorted order, from 0.
pub fn vocabulary(sentence: &str) -> BTreeMap<String, usize> {
    // TODO: split the sentence into words, drop the commas, sort them, and give the
    // i-th word in sorted order the id i.
    let _ = sentence;
    todo!("vocabulary")
}

/// The id of every word of `sentence`, in order.
///
/// # Shapes
/// Returns `[number of words]`.
pub fn token_ids(sentence: &str, vocab: &BTreeMap<String, usize>) -> Tensor<i64> {
    // TODO: look up each word of the sentence (commas removed) in `vocab` and collect the
    // ids into a 1-D tensor.
    let _ = (sentence, vocab);
    todo!("token_ids")
}
