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
use crate::speculative::{Round, Speculation};
use crate::target_pass::{prefilled_caches, target_pass, truncate};

/// `n_new` tokens of speculative sampling with `k` draft tokens per target pass (fewer
/// near the end), probabilities `softmax(logits)` for both models.
///
/// # Shapes
/// `prompt`: `[1, tokens]`.
// ANCHOR: speculate_sampled
pub fn speculate_sampled(
    draft: &TinyModel,
    target: &TinyModel,
    prompt: &Tensor<i64>,
    n_new: usize,
    k: usize,
    recipe: &Recipe,
) -> Speculation {
    let mut ids = prompt.clone();
    let mut rounds = Vec::new();
    let mut caches = prefilled_caches(target, prompt, recipe);
    while ids.size(1) < prompt.size(1) + n_new {
        let len = ids.size(1);
        let k_now = k.min(prompt.size(1) + n_new - len - 1);
        let mut candidate = ids.clone();
        let mut qs = Vec::new();
        for _ in 0..k_now {
            let (logits, _) = draft.forward(&candidate, recipe);
            let q = logits.select(1, -1).softmax(-1);
            candidate = cat(&[&candidate, &q.multinomial(1, false)], 1);
            qs.push(q);
        }
        let tokens = candidate.narrow(1, len - 1, k_now + 1);
        let logits = target_pass(target, &tokens, len - 1, &mut caches, recipe);
        let ps = logits.softmax(-1);
        let drafted = candidate.narrow(1, len, k_now).to_vec();
        let mut written = Vec::new();
        let mut replaced = None;
        for (i, q) in qs.iter().enumerate() {
            replaced = accept_or_replace(&ps.select(1, i), q, drafted[i]);
            written.push(replaced.unwrap_or(drafted[i]));
            if replaced.is_some() {
                break;
            }
        }
        if replaced.is_none() {
            // every draft kept: the target's own next token comes free with the pass
            written.push(ps.select(1, k_now).multinomial(1, false).item());
        }
        ids = cat(
            &[
                &ids,
                &Tensor::from_vec(written.clone(), &[1, written.len()]),
            ],
            1,
        );
        truncate(&mut caches, len + written.len() - 1); // drop the rejected proposals
        rounds.push(Round {
            drafted,
            accepted: written.len() - 1,
            target: written,
        });
    }
    Speculation { ids, rounds }
}
// ANCHOR_END: speculate_sampled
