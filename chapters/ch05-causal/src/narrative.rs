//! The chapter's printed steps, in the order of the reference script
//! `reference/ch05_causal.py`.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS as WORDS, your_journey};
use ch04_trainable::SelfAttentionV2;
use ch04_trainable::scaled::scaled_attention_weights;
use course::{Narrative, Seed};
use shared::nn::Dropout;
use shared::{Result, manual_seed, ones, stack};

use crate::causal_attention::CausalAttention;
use crate::mask::causal_mask;
use crate::masked_softmax::masked_softmax;
use crate::renormalize::renormalize_rows;

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 5: Causal attention");
    let inputs = your_journey();
    let (d_in, d_out) = (inputs.size(1), 2);

    // ANCHOR: weights
    manual_seed(seed.or(789));
    let sa_v2 = SelfAttentionV2::new(d_in, d_out, false);
    let queries = sa_v2.w_query.forward(&inputs);
    let keys = sa_v2.w_key.forward(&inputs);
    let d_k = keys.size(-1);
    let attn_scores = queries.matmul(&keys.t());
    let attn_weights = scaled_attention_weights(&attn_scores, d_k);
    story
        .step(format!(
            "Attention weights from SelfAttention_v2 (manual_seed({}))",
            seed.or(789)
        ))
        .print(&attn_weights)
        .heatmap("every key visible", &attn_weights, &WORDS, &WORDS)?;
    // ANCHOR_END: weights

    // ANCHOR: renormalise
    let context_length = attn_scores.size(0);
    let mask_simple = ones(&[context_length, context_length]).tril(0);
    story.step("A simple mask with tril").print(&mask_simple);
    // An elementwise product (the article calls it a matrix multiplication).
    let masked_simple = &attn_weights * &mask_simple;
    story
        .step("Masked attention weights")
        .print(&masked_simple)
        .heatmap("masked", &masked_simple, &WORDS, &WORDS)?;
    let masked_simple_norm = renormalize_rows(&masked_simple);
    story
        .step("Renormalised rows")
        .print(&masked_simple_norm)
        .heatmap("renormalised", &masked_simple_norm, &WORDS, &WORDS)?;
    // ANCHOR_END: renormalise

    // ANCHOR: minus_infinity
    let mask = causal_mask(context_length);
    let masked = attn_scores.masked_fill(&mask, f32::NEG_INFINITY);
    story
        .step("Masking the scores with -inf above the diagonal")
        .print(&masked);
    let attn_weights = masked_softmax(&attn_scores, &mask, d_k);
    story
        .step("Softmax of the masked scores")
        .print(&attn_weights)
        .heatmap("causal weights", &attn_weights, &WORDS, &WORDS)?;
    // ANCHOR_END: minus_infinity

    // ANCHOR: dropout
    // Each weight is dropped with probability 0.5 and the kept ones are doubled
    // (1 / (1 - 0.5)), so a row's expected sum stays 1; the seed fixes which ones drop.
    manual_seed(seed.or(123));
    let dropout = Dropout::f_new(0.5)?;
    let dropped = dropout.forward(&attn_weights);
    story
        .step(format!("Dropout(0.5) after manual_seed({})", seed.or(123)))
        .print(&dropped)
        .heatmap("after dropout", &dropped, &WORDS, &WORDS)?;
    // ANCHOR_END: dropout

    // ANCHOR: batch
    let batch = stack(&[&inputs, &inputs], 0);
    story.step("A batch of two inputs").print(batch.shape());
    // ANCHOR_END: batch

    // ANCHOR: causal_attention
    manual_seed(seed.or(123));
    let context_length = batch.size(1);
    let ca = CausalAttention::new(d_in, d_out, context_length, 0.0, false);
    let context_vecs = ca.forward(&batch);
    story
        .step(format!(
            "CausalAttention on the batch (manual_seed({}), dropout 0.0)",
            seed.or(123)
        ))
        .print(&context_vecs)
        .print(format!("context_vecs shape:  {}", context_vecs.shape()));
    // ANCHOR_END: causal_attention

    Ok(story)
}
