//! Speculative decoding with a draft that costs nothing: prompt lookup.
//!
//! Text repeats itself: code repeats names and patterns, an answer quotes its question. So
//! the cheapest draft is the sequence itself: find the last few tokens earlier in it and
//! propose the tokens that followed them there (Saxena, 2023, "Prompt Lookup Decoding").
//! The full model checks the proposals in one pass, with chapter 17's round
//! (`speculate_with`), and keeps the run it agrees with, plus its own next token: the
//! output is its greedy output, however good or bad the guesses.

use ch15_modern_layer::{Recipe, TinyModel};
use ch17_inference::speculative::{Draft, Speculation, speculate_with};
use shared::Tensor;

/// Up to `k` tokens that followed the latest earlier occurrence of the sequence's last
/// `n` tokens, trying `n = max_ngram` first, then shorter; none if nothing repeats.
///
/// # Shapes
/// `ids`: the sequence so far. Returns at most `k` ids.
// ANCHOR: lookup_draft
pub fn lookup_draft(ids: &[i64], k: usize, max_ngram: usize) -> Vec<i64> {
    for n in (1..=max_ngram.min(ids.len().saturating_sub(1))).rev() {
        let tail = &ids[ids.len() - n..];
        // the latest start before the tail itself whose n tokens equal the tail
        if let Some(start) =
            (0..ids.len() - n).rev().find(|&s| &ids[s..s + n] == tail)
        {
            let from = start + n;
            return ids[from..(from + k).min(ids.len())].to_vec();
        }
    }
    Vec::new()
}
// ANCHOR_END: lookup_draft

/// Prompt lookup as chapter 17's draft: [`lookup_draft`] over the sequence so far, with
/// n-grams of up to `max_ngram` tokens; the target checks its proposals greedily.
// ANCHOR: speculate_lookup
pub struct LookupDraft {
    /// The longest tail looked up.
    pub max_ngram: usize,
}

impl Draft for LookupDraft {
    fn propose(&mut self, ids: &Tensor<i64>, k: usize) -> Vec<i64> {
        lookup_draft(&ids.to_vec(), k, self.max_ngram)
    }
}

/// `n_new` tokens of greedy speculative decoding with prompt-lookup drafts of up to
/// `k` tokens (chapter 17's round, with [`LookupDraft`] as the draft).
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
pub fn speculate_lookup(
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut draft = LookupDraft { max_ngram: 3 };
    speculate_with(&mut draft, target, prompt, n_new, k, recipe)
}
// ANCHOR_END: speculate_lookup
