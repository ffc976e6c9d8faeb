//! The chapter's printed steps, in the order of the reference script
//! `reference/ch06_multihead_wrapper.py`.

use ch01_embeddings::inputs::{
    LIFE_IS_SHORT, YOUR_JOURNEY_WORDS as WORDS, your_journey,
};
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use ch05_causal::masked_softmax::masked_softmax;
use course::{Narrative, Seed};
use shared::nn::Embedding;
use shared::{Result, Tensor, manual_seed, rand, stack};

use crate::stacked::{head_contexts, project_heads};
use crate::wrapper::MultiHeadAttentionWrapper;

/// The causal weights of each head of `mha` over `batch`, as each head's forward computes
/// them (for the heatmaps: the wrapper returns only the context vectors). Dropout is 0,
/// so this draws no random numbers and the printed story stays the same.
///
/// # Shapes
/// `batch`: `[b, num_tokens, d_in]`; returns one `[b, num_tokens, num_tokens]` per head.
fn head_weights(
    mha: &MultiHeadAttentionWrapper,
    batch: &Tensor,
) -> Result<Vec<Tensor>> {
    let num_tokens = batch.size(1);
    mha.heads
        .iter()
        .map(|head| {
            let keys = head.w_key.forward(batch);
            let queries = head.w_query.forward(batch);
            let scores = queries.matmul(&keys.transpose(-2, -1));
            let mask = head.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
            Ok(masked_softmax(&scores, &mask, keys.size(-1)))
        })
        .collect()
}

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story =
        Narrative::new("Chapter 6: Multi-head attention by stacking heads");

    // ANCHOR: wrapper_print
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0); // [2, 6, 3]
    manual_seed(seed.or(123));
    let context_length = batch.size(1);
    let (d_in, d_out) = (3, 2);
    let mha =
        MultiHeadAttentionWrapper::new(d_in, d_out, context_length, 0.0, 2, false);
    let context_vecs = mha.forward(&batch);
    let step = story.step(format!(
        "MultiHeadAttentionWrapper, two heads (manual_seed({}))",
        seed.or(123)
    ));
    step.print(&context_vecs);
    step.print_shape("context_vecs.shape", &context_vecs);
    // ANCHOR_END: wrapper_print
    for (i, weights) in head_weights(&mha, &batch)?.iter().enumerate() {
        step.heatmap(&format!("head {i}"), &weights.get(0), &WORDS, &WORDS)?;
    }

    // Raschka's article's sentence, embedded as in chapter 1.
    let vocab = vocabulary(LIFE_IS_SHORT);
    let sentence_int = token_ids(LIFE_IS_SHORT, &vocab);
    manual_seed(seed.or(123));
    let embed = Embedding::new(6, 16);
    let embedded_sentence = lookup(&embed.weight, &sentence_int); // [6, 16]

    // Chapter 4's single-head weights. They are drawn only because Raschka's article draws the
    // multi-head weights right after them, without re-seeding: the generator must be at
    // the same place.
    manual_seed(seed.or(123));
    let d = embedded_sentence.size(1);
    let (d_q, d_k, d_v) = (24, 24, 28);
    for rows in [d_q, d_k, d_v] {
        rand(&[rows, d]);
    }
    let x_2 = embedded_sentence.get(1);

    // ANCHOR: stacked_weights
    let h = 3;
    let multihead_w_query = rand(&[h, d_q, d]);
    let multihead_w_key = rand(&[h, d_k, d]);
    let multihead_w_value = rand(&[h, d_v, d]);
    // ANCHOR_END: stacked_weights
    let step = story.step("Three heads of weights (rand, the generator continues)");
    step.print_shape("multihead_W_query.shape", &multihead_w_query);
    step.print_shape("multihead_W_key.shape", &multihead_w_key);
    step.print_shape("multihead_W_value.shape", &multihead_w_value);

    // [heads, d_q, d] · [d]: one query of x(2) per head.
    let multihead_query_2 = multihead_w_query.matmul(&x_2);
    story
        .step("The query of x(2) in every head")
        .print(multihead_query_2.shape());

    let multihead_key_2 = multihead_w_key.matmul(&x_2);
    let multihead_value_2 = multihead_w_value.matmul(&x_2);
    let step = story.step("The key and value of x(2) in every head");
    step.print_shape("multihead_key_2.shape", &multihead_key_2);
    step.print_shape("multihead_value_2.shape", &multihead_value_2);

    // The three steps inside `project_heads`, one at a time, to show the shapes.
    // ANCHOR: stacked_steps
    let stacked_inputs = embedded_sentence.t().repeat(&[h, 1, 1]);
    story
        .step("The inputs stacked once per head")
        .print(stacked_inputs.shape());

    let step =
        story.step("Keys and values of all inputs (d_k = 24, d_v = 28) with bmm");
    step.print_shape(
        "multihead_keys.shape",
        &multihead_w_key.bmm(&stacked_inputs),
    );
    step.print_shape(
        "multihead_values.shape",
        &multihead_w_value.bmm(&stacked_inputs),
    );

    let multihead_keys = project_heads(&multihead_w_key, &embedded_sentence);
    let multihead_values = project_heads(&multihead_w_value, &embedded_sentence);
    let step = story.step("Permuted to (heads, tokens, dims)");
    step.print_shape("multihead_keys.shape", &multihead_keys);
    step.print_shape("multihead_values.shape", &multihead_values);
    // ANCHOR_END: stacked_steps

    // ANCHOR: head_contexts_print
    let multihead_context_vector_2 =
        head_contexts(&multihead_query_2, &multihead_keys, &multihead_values);
    for (i, context_vector_2) in multihead_context_vector_2.iter().enumerate() {
        let step = story.step(format!("Head {i}: context vector z(2)"));
        step.print_shape("context_vector_2.shape", &context_vector_2);
        step.print("context_vector_2:").print(&context_vector_2);
    }
    let step = story.step("The h x d_v context of x(2)");
    step.print_shape(
        "multihead_context_vector_2.shape",
        &multihead_context_vector_2,
    );
    // ANCHOR_END: head_contexts_print

    Ok(story)
}
