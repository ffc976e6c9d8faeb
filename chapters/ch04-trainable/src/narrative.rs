//! The chapter's printed steps, in the order of the reference script
//! `reference/ch04_trainable.py`.

use ch01_embeddings::inputs::{
    LIFE_IS_SHORT, YOUR_JOURNEY_WORDS as WORDS, my_name_ids, your_journey,
};
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use course::{Narrative, Seed};
use shared::nn::Embedding;
use shared::{Result, Tensor, manual_seed, rand, randn};

use crate::scaled::scaled_attention_weights;
use crate::self_attention::{SelfAttentionV1, SelfAttentionV2};

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story =
        Narrative::new("Chapter 4: Self-attention with trainable weights");
    seed_000(&mut story, seed)?;
    seed_004(&mut story, seed)?;
    seed_001(&mut story, seed)?;
    Ok(story)
}

/// The blog post: one query step by step with `x · W`, then the two modules.
fn seed_000(story: &mut Narrative, seed: Seed) -> Result<()> {
    let inputs = your_journey();
    let x_2 = inputs.select(0, 1);
    let (d_in, d_out) = (inputs.size(1), 2);

    // ANCHOR: seed_000_weights
    manual_seed(seed.or(123));
    let w_query = randn(&[d_in, d_out]);
    let w_key = randn(&[d_in, d_out]);
    let w_value = randn(&[d_in, d_out]);
    // ANCHOR_END: seed_000_weights

    // ANCHOR: seed_000_query_2
    let query_2 = x_2.matmul(&w_query);
    story
        .step(format!(
            "Query of x(2) (randn weights, manual_seed({}))",
            seed.or(123)
        ))
        .print(format!("Query vector: {query_2}"));
    // ANCHOR_END: seed_000_query_2

    // ANCHOR: seed_000_keys_values
    let keys = inputs.matmul(&w_key);
    let values = inputs.matmul(&w_value);
    story
        .step("Keys and values of all inputs")
        .print(format!("Keys shape: {}", keys.shape()))
        .print(format!("Values shape: {}", values.shape()));
    // ANCHOR_END: seed_000_keys_values

    // ANCHOR: seed_000_scores
    let attn_score_22 = query_2.dot(&keys.select(0, 1));
    story.step("Attention score omega_22").print(&attn_score_22);
    let attn_scores_2 = query_2.matmul(&keys.t());
    story.step("Attention scores omega_2").print(&attn_scores_2);
    // ANCHOR_END: seed_000_scores

    // ANCHOR: seed_000_weights_context
    let d_k = keys.size(-1);
    let attn_weights_2 = scaled_attention_weights(&attn_scores_2, d_k);
    story
        .step("Scaled softmax")
        .print(&attn_weights_2)
        .heatmap("x(2) attends", &attn_weights_2, &[WORDS[1]], &WORDS)?;
    let context_vec_2 = attn_weights_2.matmul(&values);
    story.step("Context vector z(2)").print(&context_vec_2);
    // ANCHOR_END: seed_000_weights_context

    // ANCHOR: seed_000_modules
    // No new seed: V1 draws its matrices right after the three above, as in the article.
    let sa_v1 = SelfAttentionV1::new(d_in, d_out);
    story
        .step("SelfAttentionv1 (the generator continues, no re-seed)")
        .print(sa_v1.forward(&inputs));

    manual_seed(seed.or(789));
    let sa_v2 = SelfAttentionV2::new(d_in, d_out, false);
    story
        .step(format!(
            "SelfAttention_v2 with nn.Linear (manual_seed({}))",
            seed.or(789)
        ))
        .print(sa_v2.forward(&inputs));
    // ANCHOR_END: seed_000_modules
    Ok(())
}

/// Raschka's article: `d_q = d_k = 24`, `d_v = 28`, weights stored `[d_out, d_in]` and
/// applied as `W · x`.
fn seed_004(story: &mut Narrative, seed: Seed) -> Result<()> {
    let vocab = vocabulary(LIFE_IS_SHORT);
    let sentence_int = token_ids(LIFE_IS_SHORT, &vocab);
    manual_seed(seed.or(123));
    let embed = Embedding::new(6, 16);
    let embedded_sentence = lookup(&embed.weight, &sentence_int);

    // ANCHOR: seed_004_weights
    manual_seed(seed.or(123));
    let d = embedded_sentence.size(1);
    let (d_q, d_k, d_v) = (24, 24, 28);
    let w_query = rand(&[d_q, d]);
    let w_key = rand(&[d_k, d]);
    let w_value = rand(&[d_v, d]);
    // ANCHOR_END: seed_004_weights

    // ANCHOR: seed_004_x_2
    let x_2 = embedded_sentence.select(0, 1);
    let query_2 = w_query.matmul(&x_2);
    let key_2 = w_key.matmul(&x_2);
    let value_2 = w_value.matmul(&x_2);
    story
        .step(format!(
            "Query, key and value of x(2) (rand weights, manual_seed({}))",
            seed.or(123)
        ))
        .print(query_2.shape())
        .print(key_2.shape())
        .print(value_2.shape());
    // ANCHOR_END: seed_004_x_2

    // ANCHOR: seed_004_keys_values
    // W · Eᵀ projects every token at once (one column each); `.t()` turns the
    // columns into rows.
    let keys = w_key.matmul(&embedded_sentence.t()).t();
    let values = w_value.matmul(&embedded_sentence.t()).t();
    story
        .step("Keys and values of all inputs (d_k = 24, d_v = 28)")
        .print(format!("keys.shape: {}", keys.shape()))
        .print(format!("values.shape: {}", values.shape()));
    // ANCHOR_END: seed_004_keys_values

    // ANCHOR: seed_004_omega
    let omega_24 = query_2.dot(&keys.select(0, 4));
    story
        .step("Unnormalized attention weight omega_24")
        .print(&omega_24);
    let omega_2 = query_2.matmul(&keys.t());
    story
        .step("Unnormalized attention weights omega_2")
        .print(&omega_2);
    // ANCHOR_END: seed_004_omega

    // The sentence's words in sentence order, without the comma: the heatmap's keys.
    let words: Vec<&str> = LIFE_IS_SHORT
        .split_whitespace()
        .map(|w| w.trim_matches(','))
        .collect();
    // ANCHOR: seed_004_context
    let attention_weights_2 = scaled_attention_weights(&omega_2, d_k);
    story
        .step("Attention weights (softmax of omega_2 / sqrt(d_k))")
        .print(&attention_weights_2)
        .heatmap("x(2) attends", &attention_weights_2, &words[1..2], &words)?;
    let context_vector_2 = attention_weights_2.matmul(&values);
    story
        .step("Context vector z(2) (d_v = 28)")
        .print(context_vector_2.shape())
        .print(&context_vector_2);
    // ANCHOR_END: seed_004_context
    Ok(())
}

/// Politi's article: one head with square `16 × 16` weights, `k = W_k · x`.
fn seed_001(story: &mut Narrative, seed: Seed) -> Result<()> {
    // ANCHOR: seed_001_weights
    let tokenized_sentence = my_name_ids();
    manual_seed(seed.or(0));
    let embed = Embedding::new(10, 16);
    let sentence_embed = lookup(&embed.weight, &tokenized_sentence);
    let d = sentence_embed.size(1);
    // Drawn right after the embedding, in this order: key, query, value.
    let w_key = rand(&[d, d]);
    let w_query = rand(&[d, d]);
    let w_value = rand(&[d, d]);
    // ANCHOR_END: seed_001_weights

    // ANCHOR: seed_001_token_1
    let token1_embed = sentence_embed.select(0, 0);
    let key_1 = w_key.matmul(&token1_embed);
    let query_1 = w_query.matmul(&token1_embed);
    let value_1 = w_value.matmul(&token1_embed);
    story
        .step("Key, query and value of token 1 (rand 16x16 weights)")
        .print(format!("key vector for token1:\n {key_1}"))
        .print(format!("query vector for token1:\n {query_1}"))
        .print(format!("value vector for token1:\n {value_1}"));
    // ANCHOR_END: seed_001_token_1

    // ANCHOR: seed_001_all_tokens
    // E · Wᵀ is the same projection for every row of E at once.
    let keys = sentence_embed.matmul(&w_key.t());
    story
        .step("Keys of all tokens (keys[0] is token 1's key)")
        .print(keys.select(0, 0));
    let values = sentence_embed.matmul(&w_value.t());
    story
        .step("Values of all tokens (values[0] is token 1's value)")
        .print(values.select(0, 0));
    // ANCHOR_END: seed_001_all_tokens

    let words = ["my", "name", "is", "marcello", "politi"];
    // ANCHOR: seed_001_context
    let a1: Tensor = scaled_attention_weights(&query_1.matmul(&keys.t()), d);
    story
        .step("Attention weights of token 1")
        .print(&a1)
        .heatmap("token 1 attends", &a1, &words[..1], &words)?;
    let z1 = a1.matmul(&values);
    story.step("Context vector z1 of token 1").print(&z1);
    // ANCHOR_END: seed_001_context
    Ok(())
}
