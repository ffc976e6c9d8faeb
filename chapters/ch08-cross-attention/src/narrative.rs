//! The chapter's printed steps, in the order of the reference script
//! `reference/ch08_cross_attention.py`.

use ch01_embeddings::inputs::LIFE_IS_SHORT;
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::qkv::MultiHeadAttentionQkv;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::nn::Embedding;
use shared::{Result, manual_seed, rand};

use crate::cross::cross_attention;
use crate::padding::{key_padding, padding_mask};

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 8: Cross-attention");

    // Raschka's article's sentence, embedded as in chapter 1.
    let vocab = vocabulary(LIFE_IS_SHORT);
    let sentence_int = token_ids(LIFE_IS_SHORT, &vocab);
    manual_seed(seed.or(123));
    let embed = Embedding::new(6, 16);
    let embedded_sentence = lookup(&embed.weight, &sentence_int); // [6, 16]

    // ANCHOR: recap
    manual_seed(seed.or(123));
    let d = embedded_sentence.size(1);
    let (d_q, d_k, d_v) = (24, 24, 28);
    let w_query = rand(&[d_q, d]);
    let w_key = rand(&[d_k, d]);
    let w_value = rand(&[d_v, d]);
    let x_2 = embedded_sentence.get(1);
    let query_2 = w_query.matmul(&x_2); // [24]
    let keys = w_key.matmul(&embedded_sentence.t()).t(); // [6, 24]
    let values = w_value.matmul(&embedded_sentence.t()).t(); // [6, 28]
    let step = story.step(format!(
        "Self-attention recap (manual_seed({}), rand weights)",
        seed.or(123)
    ));
    step.print_shape("embedded_sentence.shape", &embedded_sentence);
    // The article's own label, without a colon.
    step.print(format!("query.shape {}", query_2.shape()));
    step.print_shape("keys.shape", &keys);
    step.print_shape("values.shape", &values);
    // ANCHOR_END: recap

    // The second sequence is random vectors, not words: its tokens go by number.
    let tokens: Vec<String> = (1..=8).map(|i| format!("#{i}")).collect();
    // ANCHOR: second_sequence
    let embedded_sentence_2 = rand(&[8, 16]); // a second input sequence, 8 tokens
    story
        .step("A second input sequence of 8 tokens (rand, the generator continues)")
        .print(&embedded_sentence_2);

    let keys = w_key.matmul(&embedded_sentence_2.t()).t(); // [8, 24]
    let values = w_value.matmul(&embedded_sentence_2.t()).t(); // [8, 28]
    let step = story.step("Keys and values from the second sequence");
    step.print_shape("keys.shape", &keys);
    step.print_shape("values.shape", &values);

    let (attention_weights_2, context_vector_2) =
        cross_attention(&query_2, &embedded_sentence_2, &w_key, &w_value);
    story
        .step("X(2) attends to the second sequence")
        .print("attention_weights_2:")
        .print(&attention_weights_2)
        .heatmap("x(2) attends", &attention_weights_2, &["is"], &tokens)?;
    story
        .step("Cross-attention context vector z(2)")
        .print(context_vector_2.shape())
        .print(&context_vector_2);
    // ANCHOR_END: second_sequence

    // Chapter 7's q/k/v module as cross-attention. Kept small: d_model = 4, two heads. A
    // batch of two "decoder" sequences of 3 tokens (the queries) attends to two "encoder"
    // sequences padded to 5 tokens (the keys and values); the second has 3 real tokens.
    // ANCHOR: padded_batch
    manual_seed(seed.or(123));
    let cross_attn = MultiHeadAttentionQkv::new(4, 2);
    let x_dec = rand(&[2, 3, 4]); // queries: [batch, 3 tokens, d_model]
    let mut x_enc = rand(&[2, 5, 4]); // keys and values: [batch, 5 tokens, d_model]
    let key_padding = key_padding(&[5, 3], 5); // [batch, 5]: 1 = real token, 0 = padding
    // [batch, 5, 1]: true on the padded rows, broadcast over d_model.
    let padded_rows = key_padding.eq_scalar(0).unsqueeze(-1);
    x_enc.masked_fill_(&padded_rows, 0.0); // the padding is zeros
    let step = story.step(format!(
        "Two sequences of different lengths (manual_seed({}))",
        seed.or(123)
    ));
    step.print_shape("x_dec.shape", &x_dec);
    step.print_shape("x_enc.shape", &x_enc);
    step.print(format!("x_dec: {x_dec}"));
    step.print(format!("x_enc: {x_enc}"));
    // ANCHOR_END: padded_batch

    // ANCHOR: padding_mask_print
    let mask = padding_mask(&key_padding); // [batch, 1, 1, 5]
    let step = story.step("The padding mask over the keys");
    step.print(format!("key_padding: {key_padding}"));
    step.print_shape("mask.shape", &mask);
    // ANCHOR_END: padding_mask_print

    // What happens inside cross_attn.forward, up to the weights.
    // ANCHOR: cross_weights
    let q = split_heads(&cross_attn.w_q.forward(&x_dec), cross_attn.n_heads);
    let k = split_heads(&cross_attn.w_k.forward(&x_enc), cross_attn.n_heads);
    let v = split_heads(&cross_attn.w_v.forward(&x_enc), cross_attn.n_heads);
    let (_, weights) = scaled_dot_product_attention(&q, &k, &v, Some(&mask));
    let step = story.step(
        "Cross-attention weights per head, \
         (batch, heads, queries, keys)",
    );
    step.print_shape("weights.shape", &weights);
    step.print(format!("weights: {weights}"));
    step.heatmap_indexed("sequence, head", &weights)?;

    let out = cross_attn.forward(&x_dec, &x_enc, &x_enc, Some(&mask));
    let step = story.step("Cross-attention output, (batch, queries, d_model)");
    step.print_shape("out.shape", &out);
    step.print(format!("out: {out}"));
    // ANCHOR_END: cross_weights

    // With the mask, whatever sits in the padded rows cannot leak into the output;
    // without it, it does.
    // ANCHOR: no_leak
    let x_enc_junk = x_enc.masked_fill(&padded_rows, 1.0);
    let out_junk = cross_attn.forward(&x_dec, &x_enc_junk, &x_enc_junk, Some(&mask));
    let out_nomask = cross_attn.forward(&x_dec, &x_enc, &x_enc, None);
    let out_nomask_junk = cross_attn.forward(&x_dec, &x_enc_junk, &x_enc_junk, None);
    story
        .step("Padding cannot leak through the mask")
        .print(format!(
            "with mask, same output: {}",
            python_bool(out.allclose_default(&out_junk))
        ))
        .print(format!(
            "without mask, same output: {}",
            python_bool(out_nomask.allclose_default(&out_nomask_junk))
        ));
    // ANCHOR_END: no_leak

    Ok(story)
}
