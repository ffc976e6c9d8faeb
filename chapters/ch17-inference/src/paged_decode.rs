//! Chapter 15's tiny model decoding through the paged cache: before each step every
//! layer's keys and values are gathered through the sequence's block table, the model
//! takes its cached step, and the new token's key and value go into the pool. The model's
//! attention takes its cache as one tensor, hence the gather; [`crate::paged_attention`]
//! is the kernel that reads through the table instead.
//!
//! Gathering only moves numbers, so the model sees exactly the cache it would have kept
//! itself, and its logits are the same bits. Products are taken one row at a time
//! (chapter 14's batch-invariant products), so a prompt whose first blocks come from the
//! prefix cache and whose last tokens are fed one by one gets the same logits as a prompt
//! computed whole.

use ch14_generation::KvCache;
use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Result, Tensor, cat};

use crate::paged::{BlockPool, Sequence};

/// One token at the end of `seq` through the model, its caches gathered from the pool;
/// its keys and values are appended to `seq`. Returns its logits.
///
/// # Shapes
/// Returns `[1, vocab_size]`.
// ANCHOR: step_paged
pub fn step_paged(
    model: &TinyModel,
    pool: &mut BlockPool,
    seq: &mut Sequence,
    token: i64,
    recipe: &Recipe,
) -> Result<Tensor> {
    let position = seq.len();
    let mut caches = (0..model.layers.len())
        .map(|layer| pool.gather(seq, layer))
        .collect::<Result<Vec<KvCache>>>()?;
    let logits = model.step(
        &Tensor::from_vec(vec![token], &[1, 1]),
        position,
        &mut caches,
        recipe,
    );
    let kv = caches.iter().map(|cache| newest(cache, position)).collect();
    pool.append(seq, token, kv)?;
    Ok(logits)
}
// ANCHOR_END: step_paged

/// The key and value of the token at `position` in a cache.
fn newest(cache: &KvCache, position: usize) -> (Tensor, Tensor) {
    (
        cache.keys.narrow(2, position, 1).contiguous(),
        cache.values.narrow(2, position, 1).contiguous(),
    )
}

/// Admits `prompt` to the pool: its blocks found in the prefix cache are reused, the rest
/// of it computed, in one pass when nothing was found, token by token after a hit.
/// Returns the sequence and the logits of its last token.
///
/// # Shapes
/// Returns `[1, vocab_size]`.
// ANCHOR: prefill_paged
pub fn prefill_paged(
    model: &TinyModel,
    pool: &mut BlockPool,
    prompt: &[i64],
    recipe: &Recipe,
) -> Result<(Sequence, Tensor)> {
    let mut seq = pool.admit(prompt);
    if seq.is_empty() {
        let ids = Tensor::from_vec(prompt.to_vec(), &[1, prompt.len()]);
        let (logits, caches) = model.forward_row_by_row(&ids, recipe);
        for (position, &token) in prompt.iter().enumerate() {
            let kv = caches.iter().map(|cache| newest(cache, position)).collect();
            pool.append(&mut seq, token, kv)?;
        }
        return Ok((seq, logits.select(1, -1)));
    }
    let mut logits = None;
    for &token in &prompt[seq.len()..] {
        logits = Some(step_paged(model, pool, &mut seq, token, recipe)?);
    }
    Ok((
        seq,
        logits.expect("admit leaves the last prompt token to compute"),
    ))
}
// ANCHOR_END: prefill_paged

/// Greedy decoding of `n_new` tokens through the pool, from the logits of the prompt's
/// last token. Returns the new tokens and the logits each was picked from.
///
/// # Shapes
/// `logits`: `[1, vocab_size]`. Returns `[1, n_new]` and `[n_new, vocab_size]`.
pub fn generate_paged(
    model: &TinyModel,
    pool: &mut BlockPool,
    seq: &mut Sequence,
    logits: Tensor,
    n_new: usize,
    recipe: &Recipe,
) -> Result<(Tensor<i64>, Tensor)> {
    let mut steps = vec![logits];
    let mut tokens = vec![steps[0].argmax_dim(-1, true)];
    for _ in 1..n_new {
        let token = tokens.last().expect("one token").item();
        let logits = step_paged(model, pool, seq, token, recipe)?;
        tokens.push(logits.argmax_dim(-1, true));
        steps.push(logits);
    }
    Ok((cat(&tokens, 1), cat(&steps, 0)))
}
