//! Greedy decoding of several prompts at once, padded on the left, kept in its own file
//! because it is an exercise.

use shared::{Tensor, cat};

use crate::generate::{Generation, greedy};
use crate::model::TinyDecoder;

/// The id written into the padding. Any id would do: the padding mask hides it.
pub const PAD: i64 = 0;

/// Greedy decoding of `n_new` tokens for every prompt, all prompts in one batch with a
/// KV cache: each prompt padded on the left to the longest, its padding hidden by a mask,
/// its positions counted from its own first token. Row `r` of the result is what
/// `generate_cached` gives for prompt `r` alone, behind its padding.
///
/// # Shapes
/// `prompts`: `batch` prompts of 1 or more ids; `n_new >= 1`. Returns ids
/// `[batch, longest + n_new]` (padding first) and logits `[n_new · batch, vocab_size]`
/// (step by step, as `generate_cached` lays them out).
// ANCHOR: generate_left_padded
pub fn generate_left_padded(
    model: &TinyDecoder,
    prompts: &[Vec<i64>],
    n_new: usize,
) -> Generation {
    let batch = prompts.len();
    let longest = prompts.iter().map(Vec::len).max().unwrap_or(0);
    let (mut ids, mut positions, mut pad) = (Vec::new(), Vec::new(), Vec::new());
    for prompt in prompts {
        let padding = longest - prompt.len();
        ids.extend(std::iter::repeat_n(PAD, padding).chain(prompt.iter().copied()));
        // Each row counts its positions from its own first token.
        positions.extend(std::iter::repeat_n(0, padding).chain(0..prompt.len()));
        pad.extend((0..longest).map(|j| j < padding));
    }
    let ids = Tensor::from_vec(ids, &[batch, longest]);
    let mut pad = Tensor::from_vec(pad, &[batch, longest]);
    let mut next_position: Vec<usize> = prompts.iter().map(Vec::len).collect();

    let positions = Tensor::from(positions).view([batch, longest]);
    let (logits, mut cache) = model.forward_padded(&ids, &positions, &pad); // the prefill
    let mut last = logits.select(1, -1);
    let mut ids = cat(&[&ids, &greedy(&last)], 1);
    let mut all_logits = vec![last];
    for _ in 1..n_new {
        let token = ids.narrow(1, ids.size(1) - 1, 1);
        let position = Tensor::from(next_position.clone()).view([batch, 1]);
        pad = cat(
            &[&pad, &Tensor::from_vec(vec![false; batch], &[batch, 1])],
            1,
        );
        last = model.step_padded(&token, &position, &pad, &mut cache);
        ids = cat(&[&ids, &greedy(&last)], 1);
        all_logits.push(last);
        next_position.iter_mut().for_each(|p| *p += 1);
    }
    Generation {
        ids,
        logits: cat(&all_logits, 0),
        weights: Vec::new(),
        cache: Some(cache),
    }
}
// ANCHOR_END: generate_left_padded
