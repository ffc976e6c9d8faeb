//! Speculative decoding with a draft that costs nothing: prompt lookup.
//!
//! Text repeats itself: code repeats names and patterns, an answer quotes its question. So
//! the cheapest draft is the sequence itself: find the last few tokens earlier in it and
//! propose the tokens that followed them there (Saxena, 2023, "Prompt Lookup Decoding").
//! The full model checks the proposals in one pass, with chapter 17's target pass, and
//! keeps the run it agrees with, plus its own next token: the output is its greedy output,
//! however good or bad the guesses.

use ch14_generation::KvCache;
use ch15_modern_layer::{Recipe, TinyModel};
use ch17_inference::accepted::accepted;
use ch17_inference::speculative::{Round, Speculation};
use ch17_inference::target_pass::{prefilled_caches, target_pass, truncate};
use shared::{Tensor, cat};

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

/// `n_new` tokens of greedy speculative decoding with prompt-lookup drafts of up to `k`
/// tokens (chapter 17's loop, with [`lookup_draft`] as the draft).
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
// ANCHOR: speculate_lookup
pub fn speculate_lookup(
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut ids = prompt.clone();
    let mut rounds = Vec::new();
    let mut caches: Vec<KvCache> = prefilled_caches(target, prompt, recipe);
    while ids.size(1) < prompt.size(1) + n_new {
        let len = ids.size(1);
        let k_now = k.min(prompt.size(1) + n_new - len - 1);
        let seq = ids.to_vec();
        let drafted = lookup_draft(&seq, k_now, 3);
        // the last written token and the proposals, in one pass of the target
        let mut tokens = vec![seq[len - 1]];
        tokens.extend(&drafted);
        let n_tokens = tokens.len();
        let logits = target_pass(
            target,
            &Tensor::from_vec(tokens, &[1, n_tokens]),
            len - 1,
            &mut caches,
            recipe,
        );
        let choices = logits.argmax_dim(-1, false); // after each of them
        let n = accepted(&drafted, &choices.to_vec());
        ids = cat(&[&ids, &choices.narrow(1, 0, n + 1)], 1);
        truncate(&mut caches, len + n); // drop the rejected proposals
        rounds.push(Round {
            drafted,
            target: choices.to_vec(),
            accepted: n,
        });
    }
    Speculation { ids, rounds }
}
// ANCHOR_END: speculate_lookup
