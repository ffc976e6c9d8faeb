//! From a sentence to token ids: a vocabulary numbers the distinct words, and the
//! sentence becomes the list of its words' numbers.

use std::collections::BTreeMap;

use shared::Tensor;

/// The words of a sentence, without commas, in order.
fn words(sentence: &str) -> impl Iterator<Item = &str> {
    sentence.split_whitespace().map(|w| w.trim_matches(','))
}

/// Numbers the distinct words of `sentence` in sorted order, like the article's
/// `{s: i for i, s in enumerate(sorted(sentence.replace(',', '').split()))}`.
/// Sorting is by Unicode code point, as Python's `sorted`, so `Life` comes before `dessert`.
// ANCHOR: vocabulary
pub fn vocabulary(sentence: &str) -> BTreeMap<String, usize> {
    let mut sorted: Vec<&str> = words(sentence).collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
        .into_iter()
        .enumerate()
        .map(|(id, word)| (word.to_string(), id))
        .collect()
}
// ANCHOR_END: vocabulary

/// The id of every word of `sentence`, in order: `torch.tensor([dc[s] for s in ...])`.
///
/// # Shapes
/// Returns `[number of words]`. Panics on a word missing from `vocab`, naming it.
// ANCHOR: token_ids
pub fn token_ids(sentence: &str, vocab: &BTreeMap<String, usize>) -> Tensor<i64> {
    let ids: Vec<usize> = words(sentence)
        .map(|w| match vocab.get(w) {
            Some(&id) => id,
            None => panic!("token_ids: the word {w:?} is not in the vocabulary"),
        })
        .collect();
    Tensor::from(ids)
}
// ANCHOR_END: token_ids
