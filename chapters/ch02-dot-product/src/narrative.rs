//! The chapter's printed steps, in the order of the reference script
//! `reference/ch02_dot_product.py`.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS as WORDS, your_journey};
use course::narrative::two_decimals;
use course::{Narrative, Seed};
use shared::Result;

use crate::all_at_once::{all_attention_scores, all_context_vectors};
use crate::context::context_vector;
use crate::normalise::normalise_by_sum;
use crate::scores::attention_scores;

/// Runs the chapter and returns what it prints. It draws no random numbers, so `seed`
/// changes nothing; every chapter takes one.
pub fn narrative(_seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 2: Dot-product attention");
    let inputs = your_journey();

    // ANCHOR: scores_loop
    let query = inputs.get(1); // the second token, "journey", is the query
    let attn_scores_2 = attention_scores(&query, &inputs);
    story
        .step("Attention scores of x(2), one dot product at a time")
        .print(&attn_scores_2);
    // ANCHOR_END: scores_loop

    // ANCHOR: naive_weights
    let attn_weights_2_tmp = normalise_by_sum(&attn_scores_2);
    story
        .step("Naive normalisation: divide by the sum")
        .print(format!("Attention Weights: {attn_weights_2_tmp}"))
        .print(format!("Sum: {:.2}", attn_weights_2_tmp.sum().item()));
    // ANCHOR_END: naive_weights

    // The context vector needs normalised weights; softmax itself (naive versus stable)
    // is chapter 3's subject, so here it is the library's.
    // ANCHOR: softmax_weights
    let attn_weights_2 = attn_scores_2.softmax(0);
    story
        .step("Softmax weights of x(2)")
        .print(format!("Attention Weights: {attn_weights_2}"))
        .print(format!("Sum: {:.2}", attn_weights_2.sum().item()))
        .heatmap("x(2) attends", &attn_weights_2, &[WORDS[1]], &WORDS)?;
    // ANCHOR_END: softmax_weights

    // ANCHOR: context_loop
    let context_vec_2 = context_vector(&attn_weights_2, &inputs);
    story
        .step("Context vector z(2), one weighted sum at a time")
        .print(&context_vec_2);
    // ANCHOR_END: context_loop

    // ANCHOR: all_at_once
    let attn_scores = all_attention_scores(&inputs);
    story
        .step("All attention scores in one matmul")
        .print(&attn_scores)
        .print(attn_scores.shape());

    let attn_weights = attn_scores.softmax(-1);
    story
        .step("Softmax over dim=-1: every row sums to 1")
        .print(&attn_weights)
        .print(format!(
            "Row sums: {}",
            two_decimals(&attn_weights.sum_dim(-1, false))
        ))
        .heatmap("queries × keys", &attn_weights, &WORDS, &WORDS)?;

    let all_context_vecs = all_context_vectors(&attn_weights, &inputs);
    story
        .step("All context vectors in one matmul")
        .print(&all_context_vecs);
    // ANCHOR_END: all_at_once

    Ok(story)
}
