//! The chapter's printed steps, in the order of `reference/ch09_flash_attention.py`.
//!
//! Digits are printed only where this side computes them with the same operations in the
//! same order as the reference script (tensor operations, the online softmax of a few
//! scores); the fast kernel, which adds its products in another order, is shown through
//! `allclose`, as PyTorch's own fused kernel is on the other side.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS as WORDS, your_journey};
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, Tensor, manual_seed, ones, rand, stack, zeros};

use crate::blocks::key_block_count;
use crate::core::{Flash, forward_with_core};
use crate::kernel::flash_attention;
use crate::online::OnlineSoftmax;
use crate::tiled::tiled_attention;

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 9: FlashAttention, attention in tiles");
    let inputs = your_journey(); // [6, 3]
    let query = inputs.get(1); // x(2), "journey"

    // ANCHOR: all_at_once
    let scores = inputs.matmul(&query); // [6]
    let weights = scores.softmax(0);
    let context = weights.matmul(&inputs); // [3]
    let step = story.step("The scores of x(2) and their softmax, all at once");
    step.print(format!("scores: {scores}"));
    step.print(format!("weights: {weights}"));
    step.print(format!("context: {context}"));
    // ANCHOR_END: all_at_once
    step.heatmap("x(2) attends", &weights, &[WORDS[1]], &WORDS)?;

    // ANCHOR: online_steps
    let step = story.step("The online softmax, two scores at a time");
    let score_values = scores.to_vec();
    let mut state = OnlineSoftmax::new();
    for (i, block) in score_values.chunks(2).enumerate() {
        state.update(&mut block.to_vec()); // the weights are not needed here
        step.print(format!(
            "block {i}: scores {}, max {}, sum {}",
            Tensor::from_vec(block.to_vec(), &[block.len()]),
            Tensor::scalar(state.max),
            Tensor::scalar(state.sum)
        ));
    }
    // With the final max and sum, every weight is one exp and one division.
    let online_weights = (&scores - state.max).exp() / state.sum;
    step.print(format!("weights: {online_weights}"));
    step.print(format!(
        "same as the softmax: {}",
        python_bool(online_weights.allclose_default(&weights))
    ));
    // ANCHOR_END: online_steps

    // ANCHOR: online_context
    let step = story.step("The context vector of x(2), one block of keys at a time");
    let mut state = OnlineSoftmax::new();
    // The weighted sum of the values so far, relative to the running maximum.
    let mut out = zeros(&[3]);
    for (i, block) in score_values.chunks(2).enumerate() {
        let values = inputs.narrow(0, 2 * i, block.len()); // [2, 3]
        let mut block_weights = block.to_vec();
        let rescale = state.update(&mut block_weights);
        let block_weights = Tensor::from_vec(block_weights, &[block.len()]);
        out = &(&out * rescale) + &block_weights.matmul(&values);
        step.print(format!(
            "block {i}: rescale {}, output so far {out}",
            Tensor::scalar(rescale)
        ));
    }
    let online_context = &out / state.sum;
    step.print(format!("context: {online_context}"));
    step.print(format!(
        "same as all at once: {}",
        python_bool(online_context.allclose_default(&context))
    ));
    // ANCHOR_END: online_context

    // ANCHOR: tiles
    manual_seed(seed.or(123));
    let q = rand(&[1, 2, 10, 5]);
    let k = rand(&[1, 2, 10, 5]);
    let v = rand(&[1, 2, 10, 5]);
    let (n, block) = (10usize, 4);
    let blocks = n.div_ceil(block);
    let computed: usize = (0..n)
        .step_by(block)
        .map(|q_start| key_block_count((q_start + block).min(n), n, block, true))
        .sum();
    let tiled = tiled_attention(&q, &k, &v, block, true);
    let visible = ones(&[n, n]).tril(0).bool();
    let (materialised, _) = scaled_dot_product_attention(&q, &k, &v, Some(&visible));
    let step = story.step(format!(
        "Tiled attention: blocks of 4, causal (manual_seed({}), shape (1, 2, 10, 5))",
        seed.or(123)
    ));
    step.print(format!(
        "query blocks: {blocks}, key blocks: {blocks}, tiles computed: {computed} of {}",
        blocks * blocks
    ));
    step.print(format!("tiled[0, 0]: {}", tiled.get(0).get(0)));
    step.print(format!(
        "same as chapter 7's materialised attention: {}",
        python_bool(tiled.allclose_default(&materialised))
    ));
    // ANCHOR_END: tiles

    // ANCHOR: kernel
    let flash = flash_attention(&q, &k, &v, true);
    let step = story
        .step("The fast kernel next to PyTorch's fused scaled_dot_product_attention");
    step.print_shape("flash.shape", &flash);
    step.print(format!(
        "causal, same as the tiles: {}",
        python_bool(flash.allclose_default(&tiled))
    ));
    let full = flash_attention(&q, &k, &v, false);
    let (full_materialised, _) = scaled_dot_product_attention(&q, &k, &v, None);
    step.print(format!(
        "without the mask, same as chapter 7: {}",
        python_bool(full.allclose_default(&full_materialised))
    ));
    // ANCHOR_END: kernel

    // ANCHOR: memory
    let step = story
        .step("What the score matrix costs at GPT-2 small's size (12 heads of 64)");
    for n in [1024usize, 4096] {
        let scores_floats = 12 * n * n;
        let output_floats = 12 * n * 64;
        let mib = |floats: usize| (floats * 4) as f64 / f64::from(1 << 20);
        step.print(format!(
            "n = {n}: scores {scores_floats} floats ({:.0} MiB), output {output_floats} floats ({:.0} MiB), ratio {}",
            mib(scores_floats),
            mib(output_floats),
            n / 64
        ));
    }
    // ANCHOR_END: memory

    // ANCHOR: drop_in
    let batch = stack(&[&inputs, &inputs], 0); // [2, 6, 3]
    manual_seed(seed.or(123));
    let mha = MultiHeadAttention::new(3, 2, 6, 0.0, 2, false);
    let context_vecs = forward_with_core(&mha, &batch, &Flash);
    let step = story.step(format!(
        "A drop-in core for chapter 7's MultiHeadAttention (manual_seed({}), d_out = 2, two heads)",
        seed.or(123)
    ));
    step.print(&context_vecs);
    step.print(format!(
        "same as MultiHeadAttention.forward: {}",
        python_bool(context_vecs.allclose_default(&mha.forward(&batch)))
    ));
    // ANCHOR_END: drop_in

    Ok(story)
}
