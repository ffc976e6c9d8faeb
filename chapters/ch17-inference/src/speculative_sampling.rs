//! Speculative sampling: the draft's tokens drawn from its probabilities `q`, each kept
//! with probability `min(1, p(x)/q(x))` under the target's `p`, and the first rejected
//! one replaced by a draw from `max(0, p − q)`.
//!
//! Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling",
//! and Leviathan et al., "Fast Inference from Transformers via Speculative Decoding":
//! the token that comes out is distributed exactly as the target's `p`. A token `x`
//! comes out either drafted and kept, with probability `q(x) · min(1, p(x)/q(x)) =
//! min(p(x), q(x))`, or as the replacement after a rejection, which happens with
//! probability `1 − Σ_y min(p(y), q(y)) = Σ_y max(0, p(y) − q(y))`; the two add up to
//! `p(x)`.
//!
//! Every draw comes from the default generator, in a fixed order: the draft's `k`
//! tokens (`multinomial`), then one uniform number per checked token (`rand`), then the
//! replacement or, when all `k` were kept, the target's next token (`multinomial`).

use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Tensor, cat};

use crate::accept_or_replace::accept_or_replace;
use crate::speculative::{Draft, Round, Speculation, speculate_with};

/// A small model that samples its drafts from its probabilities `q = softmax(logits)`,
/// and keeps each `q` for the check.
// ANCHOR: speculate_sampled
pub struct SampledDraft<'a> {
    /// The draft model.
    pub model: &'a TinyModel,
    /// Its switches.
    pub recipe: &'a Recipe,
    /// The distribution each proposal of this round was drawn from.
    q: Vec<Tensor>,
}

impl Draft for SampledDraft<'_> {
    fn propose(&mut self, ids: &Tensor<i64>, k: usize) -> Vec<i64> {
        let mut candidate = ids.clone();
        self.q.clear();
        for _ in 0..k {
            let (logits, _) = self.model.forward(&candidate, self.recipe);
            let q = logits.select(1, -1).softmax(-1);
            candidate = cat(&[&candidate, &q.multinomial(1, false)], 1);
            self.q.push(q);
        }
        candidate.narrow(1, ids.size(1), k).to_vec()
    }

    fn check(&mut self, drafted: Vec<i64>, logits: &Tensor) -> Round {
        let p = logits.softmax(-1);
        let mut written = Vec::new();
        for (i, q) in self.q.iter().enumerate() {
            let replaced = accept_or_replace(&p.select(1, i), q, drafted[i]);
            written.push(replaced.unwrap_or(drafted[i]));
            if replaced.is_some() {
                return Round {
                    drafted,
                    target: written,
                    accepted: i,
                };
            }
        }
        // every draft kept: the target's own next token comes free with the pass
        written.push(p.select(1, drafted.len()).multinomial(1, false).item());
        Round {
            accepted: drafted.len(),
            drafted,
            target: written,
        }
    }
}

/// `n_new` tokens of speculative sampling with `k` draft tokens per target pass
/// (fewer near the end), probabilities `softmax(logits)` for both models.
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
pub fn speculate_sampled(
    draft: &TinyModel,
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut draft = SampledDraft {
        model: draft,
        recipe,
        q: Vec::new(),
    };
    speculate_with(&mut draft, target, prompt, n_new, k, recipe)
}
// ANCHOR_END: speculate_sampled
