//! Decoding with chapter 14's KV cache: the prompt once (the prefill), then one token at a
//! time, each new token either the likeliest (greedy) or drawn with chapter 15's samplers,
//! handed to a callback as soon as it is chosen so that a reader sees it appear. The cache
//! grows in place ([`growing_cache`](crate::growing_cache)), and the prefill computes the
//! logits of the last position only: generation reads no others.

use ch14_generation::KvCache;
use ch15_modern_layer::sampling::{Sampler, next_token_probs};
use ch15_modern_layer::{Layer, Recipe, TinyModel};
use shared::rng::{Generator, with_default_generator};
use shared::{Tensor, cat};

use crate::error::LoadError;
use crate::growing_cache::{GrowingCache, growing, step, step_side_by_side};
use crate::quantised::QuantModel;

/// How each new token is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// The likeliest token.
    Greedy,
    /// Drawn from chapter 15's sampler's probabilities, with the default generator.
    Sample(Sampler),
}

/// What a generation stops at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// At most this many new tokens.
    pub max_new_tokens: usize,
    /// The end-of-sequence token, which ends the reply (and is kept as its last token).
    pub eos: Option<u32>,
    /// The longest sequence the model takes.
    pub context_length: usize,
}

/// Checks that a prompt can be read and continued within the model's context.
pub fn check_prompt(
    prompt: &[u32],
    limits: &Limits,
    vocab: usize,
) -> Result<(), LoadError> {
    if prompt.is_empty() {
        return Err(LoadError::Prompt(
            "the prompt is empty: give the model at least one token".into(),
        ));
    }
    if let Some(&bad) = prompt.iter().find(|&&id| id as usize >= vocab) {
        return Err(LoadError::Prompt(format!(
            "token id {bad} is outside the vocabulary of {vocab}"
        )));
    }
    let needed = prompt.len() + limits.max_new_tokens;
    if needed > limits.context_length {
        return Err(LoadError::Prompt(format!(
            "{} prompt tokens + {} new tokens = {needed} is longer than the model's context of {} tokens",
            prompt.len(),
            limits.max_new_tokens,
            limits.context_length
        )));
    }
    Ok(())
}

/// Token ids as the `[1, tokens]` tensor the model reads.
///
/// # Shapes
/// Returns `[1, ids.len()]`.
pub fn as_batch(ids: &[u32]) -> Tensor<i64> {
    Tensor::from_vec(ids.iter().map(|&i| i64::from(i)).collect(), &[1, ids.len()])
}

/// The prefill: the prompt through every layer once, every layer's cache, and the logits
/// of the last position only (the vocabulary head is the largest product of the model,
/// and generation reads no other position's logits).
///
/// The head multiplies the last two positions, not the last alone: a product of one row
/// adds its terms in the one-row order of chapter 14's decoding steps, one of several
/// rows in the order the whole prompt's product uses, so the logits keep the bits of
/// [`TinyModel::forward`]'s last row.
///
/// # Shapes
/// `ids`: `[batch, tokens]`. Returns `[batch, vocab_size]` and one cache per layer.
// ANCHOR: prefill
pub fn prefill(
    model: &TinyModel,
    ids: &Tensor<i64>,
    recipe: &Recipe,
) -> (Tensor, Vec<KvCache>) {
    let (x, caches) = model.through_layers(ids, recipe, Layer::forward);
    let rows = x.size(1).min(2);
    let last = x.narrow(1, x.size(1) - rows, rows);
    (model.lm_head.forward(&last).select(1, -1), caches)
}
// ANCHOR_END: prefill

/// What generation needs of a model: the prefill and the cached step. Chapter 15's model
/// with float32 weights is one; the same model with its matrices kept quantised
/// ([`QuantModel`]) is the other, with the same bits.
pub trait Decoder {
    /// Tokens in the vocabulary.
    fn vocab_size(&self) -> usize;

    /// [`prefill`]: the last position's logits and every layer's cache.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, vocab_size]` and one cache per layer.
    fn prefill(&self, ids: &Tensor<i64>, recipe: &Recipe) -> (Tensor, Vec<KvCache>);

    /// The logits of one new token at `position` over caches grown in place.
    ///
    /// # Shapes
    /// `token`: `[batch, 1]`. Returns `[batch, vocab_size]`.
    fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        caches: &mut [GrowingCache],
        recipe: &Recipe,
    ) -> Tensor;
}

impl Decoder for TinyModel {
    fn vocab_size(&self) -> usize {
        self.tok_emb.weight.size(0)
    }

    fn prefill(&self, ids: &Tensor<i64>, recipe: &Recipe) -> (Tensor, Vec<KvCache>) {
        prefill(self, ids, recipe)
    }

    fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        caches: &mut [GrowingCache],
        recipe: &Recipe,
    ) -> Tensor {
        step(self, token, position, caches, recipe)
    }
}

impl Decoder for QuantModel {
    fn vocab_size(&self) -> usize {
        self.embedding.rows
    }

    fn prefill(&self, ids: &Tensor<i64>, recipe: &Recipe) -> (Tensor, Vec<KvCache>) {
        QuantModel::prefill(self, ids, recipe)
    }

    fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        caches: &mut [GrowingCache],
        recipe: &Recipe,
    ) -> Tensor {
        QuantModel::step(self, token, position, caches, recipe)
    }
}

/// The next token after `logits`.
///
/// # Shapes
/// `logits`: `[vocab]`; `seen`: the sequence so far.
fn choose(logits: &Tensor, seen: &[u32], choice: Choice) -> u32 {
    match choice {
        Choice::Greedy => logits.argmax().item() as u32,
        Choice::Sample(sampler) => {
            let seen: Vec<i64> = seen.iter().map(|&i| i64::from(i)).collect();
            let probs = next_token_probs(logits, &seen, &sampler);
            probs.unsqueeze(0).multinomial(1, false).item() as u32
        }
    }
}

/// Generates after `prompt`: prefill, then cached steps; `on_token` sees each new token as
/// it is chosen. Returns the new tokens.
///
/// # Shapes
/// `prompt`: token ids, checked by [`check_prompt`].
// ANCHOR: generate
pub fn generate(
    model: &impl Decoder,
    recipe: &Recipe,
    prompt: &[u32],
    choice: Choice,
    limits: &Limits,
    mut on_token: impl FnMut(u32),
) -> Result<Vec<u32>, LoadError> {
    check_prompt(prompt, limits, model.vocab_size())?;
    let mut ids = prompt.to_vec();
    let (logits, caches) = model.prefill(&as_batch(prompt), recipe);
    let mut last = logits.select(0, 0);
    // Room for every token this generation can reach: the buffers never grow.
    let mut caches = growing(&caches, recipe, prompt.len() + limits.max_new_tokens);
    while ids.len() < prompt.len() + limits.max_new_tokens {
        let next = choose(&last, &ids, choice);
        ids.push(next);
        on_token(next);
        if Some(next) == limits.eos
            || ids.len() == prompt.len() + limits.max_new_tokens
        {
            break;
        }
        let position = ids.len() - 1;
        last = model
            .step(&as_batch(&[next]), position, &mut caches, recipe)
            .select(0, 0);
    }
    Ok(ids[prompt.len()..].to_vec())
}
// ANCHOR_END: generate

/// [`generate`] for several continuations of one prompt at once, each with its own choice,
/// each drawing from the default generator as if `manual_seed(seed)` had been called just
/// before it alone: continuation `j` is what `generate` with `choices[j]` writes after
/// `manual_seed(seed)`, token for token.
///
/// The prompt is read once (one prefill, its caches copied for every continuation), and
/// each step takes the new token of every continuation together ([`step_side_by_side`]),
/// so the weights are read once per step rather than once per continuation. A
/// continuation that ends early (at the end-of-sequence token) is carried along to the
/// end, its further tokens dropped. The default generator is left as the last
/// continuation leaves it.
///
/// # Shapes
/// `prompt`: token ids, checked by [`check_prompt`]. Returns one list of new tokens per
/// choice.
pub fn generate_side_by_side(
    model: &TinyModel,
    recipe: &Recipe,
    prompt: &[u32],
    choices: &[Choice],
    limits: &Limits,
    seed: u64,
) -> Result<Vec<Vec<u32>>, LoadError> {
    check_prompt(prompt, limits, model.vocab_size())?;
    let n = choices.len();
    let total = prompt.len() + limits.max_new_tokens;
    let (logits, caches) = prefill(model, &as_batch(prompt), recipe);
    // The prompt's caches, once for every continuation: `[n, n_kv_heads, tokens, head_dim]`.
    let copies = |t: &Tensor| cat(&vec![t; n], 0);
    let caches: Vec<KvCache> = caches
        .iter()
        .map(|c| KvCache {
            keys: copies(&c.keys),
            values: copies(&c.values),
            window: c.window,
        })
        .collect();
    let mut caches = growing(&caches, recipe, total);
    let mut generators = vec![Generator::new(seed); n];
    let mut ids = vec![prompt.to_vec(); n];
    let mut done = vec![false; n];
    let mut last = vec![logits.select(0, 0); n];
    loop {
        let mut next = Vec::with_capacity(n);
        for j in 0..n {
            if done[j] {
                next.push(i64::from(ids[j][ids[j].len() - 1]));
                continue;
            }
            // Continuation j's own generator in place of the default one, for its draw.
            with_default_generator(|g| std::mem::swap(g, &mut generators[j]));
            let token = choose(&last[j], &ids[j], choices[j]);
            with_default_generator(|g| std::mem::swap(g, &mut generators[j]));
            ids[j].push(token);
            done[j] = Some(token) == limits.eos || ids[j].len() == total;
            next.push(i64::from(token));
        }
        let Some(running) = (0..n).find(|&j| !done[j]) else {
            break;
        };
        let position = ids[running].len() - 1;
        let tokens = Tensor::from_vec(next, &[n, 1]);
        let logits = step_side_by_side(model, &tokens, position, &mut caches, recipe);
        last = (0..n).map(|j| logits.select(0, j)).collect();
    }
    if let Some(generator) = generators.pop() {
        with_default_generator(|g| *g = generator);
    }
    Ok(ids.iter().map(|ids| ids[prompt.len()..].to_vec()).collect())
}
