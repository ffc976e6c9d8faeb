//! Sampling from a trained model, as nanoGPT's `generate` does: the logits of the last
//! position, softmax, one token drawn in proportion to its probability, appended, again;
//! the model only ever reads the last `context` tokens.

use shared::rng::Generator;
use shared::{Error, Result, Tensor};

use crate::model::Model;

/// `new_tokens` tokens drawn one at a time after `prompt`, each from the model's
/// distribution over the next token (`multinomial` with `generator`, a generator of
/// the sampler's own, so that sampling in the middle of a run leaves the training
/// batches as they were).
///
/// # Shapes
/// `prompt`: at least one token id. Returns `new_tokens` ids.
// ANCHOR: sample
pub fn sample(
    model: &Model,
    prompt: &[u32],
    new_tokens: usize,
    generator: &mut Generator,
) -> Result<Vec<u32>> {
    if prompt.is_empty() {
        return Err(Error::InvalidArgument {
            op: "sample",
            detail: "a sample needs a prompt of at least one token".into(),
        });
    }
    let mut ids = prompt.to_vec();
    for _ in 0..new_tokens {
        let start = ids.len().saturating_sub(model.context());
        let window: Vec<i64> = ids[start..].iter().map(|&t| i64::from(t)).collect();
        let tokens = window.len();
        let logits = model.forward(&Tensor::from_vec(window, &[1, tokens]));
        let last = logits.select(1, tokens - 1); // [1, vocab_size]
        let next = last
            .softmax(-1)
            .multinomial_with(1, false, generator)
            .item();
        ids.push(next as u32);
    }
    Ok(ids.split_off(prompt.len()))
}
// ANCHOR_END: sample
