//! Exercise: decode two prompts of different lengths together. Replace the `todo!()`; test
//! with `cargo test -p ch14-generation --features exercise generate_left_padded`.

use crate::generate::Generation;
use crate::model::TinyDecoder;

/// The id written into the padding. Any id would do: the padding mask hides it.
pub const PAD: i64 = 0;

/// Greedy decoding of `n_new` tokens for every prompt, all prompts in one batch with a
/// KV cache. Row `r` of the result must be what `generate_cached` gives for prompt `r`
/// alone, behind its padding.
///
/// # Shapes
/// `prompts`: `batch` prompts of 1 or more ids; `n_new >= 1`. Returns ids
/// `[batch, longest + n_new]` (padding first) and logits `[n_new · batch, vocab_size]`
/// (step by step, as `generate_cached` lays them out).
pub fn generate_left_padded(
    model: &TinyDecoder,
    prompts: &[Vec<i64>],
    n_new: usize,
) -> Generation {
    // TODO: put the prompts in one [batch, longest] rectangle, padding on the left. What
    // must the padding mask hide, and at which position does each row's first real token
    // sit? Prefill with `model.forward_padded`, then one column per step with
    // `model.step_padded`; `crate::generate::greedy` picks the tokens.
    let _ = (model, prompts, n_new);
    todo!("generate_left_padded")
}
