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

/// One target pass.
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

/// `n_new` tokens of greedy speculative decoding with `k` draft tokens per target pass
/// (fewer near the end, so that no pass writes past `n_new`).
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
// ANCHOR: speculate
pub fn speculate_greedy(
    draft: &TinyModel,
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let plain = TinyModel::forward; // the draft's forward: only its guesses count
    let mut ids = prompt.clone();
    let mut rounds = Vec::new();
    // the target's cache holds every written token but the last
    let mut caches = prefilled_caches(target, prompt, recipe);
    while ids.size(1) < prompt.size(1) + n_new {
        let len = ids.size(1);
        let k_now = k.min(prompt.size(1) + n_new - len - 1);
        let mut proposal = ids.clone();
        if k_now > 0 {
            let drafts = generate_cached(draft, &ids, k_now, recipe, plain);
            proposal = drafts.ids;
        }
        // the last written token and the k proposals, in one pass of the target
        let tokens = proposal.narrow(1, len - 1, k_now + 1);
        let logits = target_pass(target, &tokens, len - 1, &mut caches, recipe);
        let choices = logits.argmax_dim(-1, false); // after each of them
        let drafted = tokens.narrow(1, 1, k_now).to_vec();
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
// ANCHOR_END: speculate
