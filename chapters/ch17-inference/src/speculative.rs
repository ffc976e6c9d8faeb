//! Greedy speculative decoding: a small draft model proposes `k` tokens, the large target
//! model scores all of them in one pass, and the longest run the target agrees with is
//! kept, plus the target's own next token.
//!
//! Leviathan et al., "Fast Inference from Transformers via Speculative Decoding", and
//! Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling".
//! One pass over `k + 1` new positions gives the target's choice after every prefix of
//! the draft at once. Under greedy decoding the target's choice is the only thing that
//! decides a token, so the output is exactly the target's own greedy output, however bad
//! the draft: a wrong draft only costs the tokens after it. Each pass yields between 1
//! and `k + 1` tokens.
//!
//! The target keeps its KV cache between passes (the rejected proposals are dropped from
//! it) and computes its products one query row at a time, so its logits are those of the
//! target decoding alone. The draft has its own cache, rebuilt each round.
//!
//! The round is the same whatever drafts: [`speculate_with`] runs it with any [`Draft`],
//! which proposes the tokens and says how the target's logits judge them. Here a small
//! model drafts greedily; chapter 17's speculative sampling draws its drafts
//! (`speculative_sampling`), and chapter 20 looks them up in the text itself.

use ch15_modern_layer::model::generate_cached;
use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Tensor, cat};

use crate::accepted::accepted;
use crate::target_pass::{prefilled_caches, target_pass, truncate};

/// A speculative generation and what each target pass kept.
#[derive(Clone, Debug)]
pub struct Speculation {
    /// `[1, prompt + n_new]`: the prompt and the new tokens.
    pub ids: Tensor<i64>,
    /// Per target pass: the drafted tokens, the target's choices, how many drafts it kept.
    pub rounds: Vec<Round>,
}

/// One target pass. It writes `target[..=accepted]`: the kept drafts, then the target's
/// own token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// The draft's proposals.
    pub drafted: Vec<i64>,
    /// Greedy: the target's choice after the sequence and each prefix of the draft.
    /// Sampling: the tokens the pass wrote (the kept drafts, then a replacement or the
    /// target's next token).
    pub target: Vec<i64>,
    /// How many proposals were kept.
    pub accepted: usize,
}

impl Speculation {
    /// Proposals kept over proposals made.
    ///
    /// # Shapes
    /// Counts only.
    pub fn acceptance_rate(&self) -> f64 {
        let drafted: usize = self.rounds.iter().map(|r| r.drafted.len()).sum();
        let kept: usize = self.rounds.iter().map(|r| r.accepted).sum();
        kept as f64 / drafted as f64
    }

    /// New tokens per target pass.
    ///
    /// # Shapes
    /// Counts only.
    pub fn tokens_per_pass(&self) -> f64 {
        let new: usize = self.rounds.iter().map(|r| r.accepted + 1).sum();
        new as f64 / self.rounds.len() as f64
    }
}

/// What speculative decoding asks of a draft: proposals, and the rule that checks them
/// against the target's logits (greedy unless the draft says otherwise).
// ANCHOR: draft
pub trait Draft {
    /// Up to `k` tokens to follow `ids`.
    ///
    /// # Shapes
    /// `ids`: `[1, tokens]`. Returns at most `k` ids.
    fn propose(&mut self, ids: &Tensor<i64>, k: usize) -> Vec<i64>;

    /// The target's verdict on `drafted`, from its logits after the last written
    /// token and after each proposal.
    ///
    /// # Shapes
    /// `logits`: `[1, drafted + 1, vocab_size]`.
    fn check(&mut self, drafted: Vec<i64>, logits: &Tensor) -> Round {
        greedy_check(drafted, logits)
    }
}
// ANCHOR_END: draft

/// Greedy decoding's check: the target's choice after each token of the pass, and the
/// longest run of proposals that agrees with it.
///
/// # Shapes
/// `logits`: `[1, drafted + 1, vocab_size]`.
// ANCHOR: greedy_check
pub fn greedy_check(drafted: Vec<i64>, logits: &Tensor) -> Round {
    let target = logits.argmax_dim(-1, false).to_vec(); // after each token
    let accepted = accepted(&drafted, &target);
    Round {
        drafted,
        target,
        accepted,
    }
}
// ANCHOR_END: greedy_check

/// `n_new` tokens of speculative decoding with `draft`'s proposals, up to `k` per target
/// pass (fewer near the end, so that no pass writes past `n_new`).
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
// ANCHOR: speculate
pub fn speculate_with(
    draft: &mut impl Draft,
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut ids = prompt.clone();
    let mut rounds = Vec::new();
    // the target's cache holds every written token but the last
    let mut caches = prefilled_caches(target, prompt, recipe);
    while ids.size(1) < prompt.size(1) + n_new {
        let len = ids.size(1);
        let k_now = k.min(prompt.size(1) + n_new - len - 1);
        let drafted = draft.propose(&ids, k_now);
        // the last written token and the proposals, in one pass of the target
        let mut tokens = vec![ids.to_vec()[len - 1]];
        tokens.extend(&drafted);
        let logits =
            target_pass(target, &as_row(tokens), len - 1, &mut caches, recipe);
        let round = draft.check(drafted, &logits);
        ids = cat(
            &[&ids, &as_row(round.target[..=round.accepted].to_vec())],
            1,
        );
        truncate(&mut caches, len + round.accepted); // drop the rejected proposals
        rounds.push(round);
    }
    Speculation { ids, rounds }
}
// ANCHOR_END: speculate

/// Token ids as a batch of one sequence.
///
/// # Shapes
/// Returns `[1, ids]`.
fn as_row(ids: Vec<i64>) -> Tensor<i64> {
    let n = ids.len();
    Tensor::from_vec(ids, &[1, n])
}

/// A small model that drafts greedily, from the sequence so far (its cache rebuilt each
/// round).
// ANCHOR: greedy_draft
pub struct GreedyDraft<'a> {
    /// The draft model.
    pub model: &'a TinyModel,
    /// Its switches.
    pub recipe: &'a Recipe,
}

impl Draft for GreedyDraft<'_> {
    fn propose(&mut self, ids: &Tensor<i64>, k: usize) -> Vec<i64> {
        if k == 0 {
            return Vec::new();
        }
        let plain = TinyModel::forward; // the draft's forward: only its guesses count
        let drafts = generate_cached(self.model, ids, k, self.recipe, plain);
        drafts.ids.narrow(1, ids.size(1), k).to_vec()
    }
}

/// `n_new` tokens of greedy speculative decoding with `k` draft tokens per target
/// pass.
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
pub fn speculate_greedy(
    draft: &TinyModel,
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut draft = GreedyDraft {
        model: draft,
        recipe,
    };
    speculate_with(&mut draft, target, prompt, n_new, k, recipe)
}
// ANCHOR_END: greedy_draft
