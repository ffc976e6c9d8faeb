//! The chapter's printed steps, in the order of the reference script
//! `reference/ch07_multihead_split.py`.

use ch01_embeddings::inputs::{
    YOUR_JOURNEY_WORDS as WORDS, my_name_ids, your_journey,
};
use ch01_embeddings::lookup::lookup;
use ch06_multihead_wrapper::wrapper::MultiHeadAttentionWrapper;
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::nn::{Embedding, Linear};
use shared::{Result, Tensor, cat, eye, manual_seed, ones, rand, stack, zeros};

use crate::einsum_heads::{
    concat_heads, einsum_head_outputs, einsum_project, einsum_scores,
};
use crate::multihead::MultiHeadAttention;
use crate::qkv::MultiHeadAttentionQkv;
use crate::scaled_dot_product::scaled_dot_product_attention;

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story =
        Narrative::new("Chapter 7: Multi-head attention with weight splits");
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0); // [2, 6, 3]

    // The blog post: Raschka's MultiHeadAttention, as his book runs it.
    manual_seed(seed.or(123));
    let (b, num_tokens, d_in) = (batch.size(0), batch.size(1), batch.size(2));
    let context_length = num_tokens;
    let d_out = 2;
    let mha = MultiHeadAttention::new(d_in, d_out, context_length, 0.0, 2, false);

    // The forward pass once more, a line at a time with mha's own layers, to show the
    // shapes through the reshapes.
    // ANCHOR: split_steps
    let keys = mha.w_key.forward(&batch);
    let queries = mha.w_query.forward(&batch);
    let values = mha.w_value.forward(&batch);
    let step = story.step("Projections, (b, num_tokens, d_out)");
    step.print_shape("keys.shape", &keys);
    step.print_shape("queries.shape", &queries);
    step.print_shape("values.shape", &values);

    let split = [b, num_tokens, mha.num_heads, mha.head_dim];
    let keys = keys.view(split);
    let values = values.view(split);
    let queries = queries.view(split);
    let step = story.step("View as (b, num_tokens, num_heads, head_dim)");
    step.print_shape("keys.shape", &keys);
    step.print_shape("queries.shape", &queries);
    step.print_shape("values.shape", &values);

    let keys = keys.transpose(1, 2);
    let queries = queries.transpose(1, 2);
    let values = values.transpose(1, 2);
    let step = story.step("Transpose to (b, num_heads, num_tokens, head_dim)");
    step.print_shape("keys.shape", &keys);
    step.print_shape("queries.shape", &queries);
    step.print_shape("values.shape", &values);

    let mut attn_scores = queries.matmul(&keys.transpose(2, 3));
    let mask_bool = mha.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
    attn_scores.masked_fill_(&mask_bool, f32::NEG_INFINITY);
    let attn_weights = (&attn_scores / (keys.size(-1) as f32).sqrt()).softmax(-1);
    let step = story.step(
        "Causal attention in every head, \
         (b, num_heads, num_tokens, num_tokens)",
    );
    step.print_shape("attn_scores.shape", &attn_scores);
    step.print_shape("attn_weights.shape", &attn_weights);
    step.heatmap("first sequence, head", &attn_weights.get(0), &WORDS, &WORDS)?;

    let step = story.step("Heads back together, (b, num_tokens, d_out)");
    let context_vec = attn_weights.matmul(&values).transpose(1, 2);
    step.print_shape(
        "(attn_weights @ values).transpose(1, 2).shape",
        &context_vec,
    );
    let context_vec =
        context_vec
            .contiguous()
            .view([b, num_tokens, mha.num_heads * mha.head_dim]);
    step.print_shape("context_vec.shape", &context_vec);
    let context_vec = mha.out_proj.forward(&context_vec);
    step.print_shape("out_proj(context_vec).shape", &context_vec);
    // ANCHOR_END: split_steps

    // ANCHOR: multihead_print
    let context_vecs = mha.forward(&batch);
    let step = story.step(format!(
        "MultiHeadAttention (manual_seed({}), d_out = 2, two heads)",
        seed.or(123)
    ));
    step.print(&context_vecs);
    step.print_shape("context_vecs.shape", &context_vecs);
    step.print(format!(
        "same as the step-by-step result: {}",
        python_bool(context_vecs == context_vec)
    ));
    // ANCHOR_END: multihead_print

    // The split version equals chapter 6's wrapper given the same weights.
    // ANCHOR: equivalence
    manual_seed(seed.or(123));
    let wrapper =
        MultiHeadAttentionWrapper::new(d_in, 2, context_length, 0.0, 2, false);
    let wrapper_out = wrapper.forward(&batch);
    story
        .step(format!(
            "The wrapper of chapter 6 (manual_seed({}), two heads of d_out = 2)",
            seed.or(123)
        ))
        .print(&wrapper_out);

    // A Linear weight is [d_out, d_in]: the heads' [2, 3] weights stacked row-wise make
    // one [4, 3] weight whose rows 0-1 feed head 0 and rows 2-3 head 1 after the split.
    // With out_proj the identity (and a zero bias) nothing is mixed.
    let mut mha_split =
        MultiHeadAttention::new(d_in, 4, context_length, 0.0, 2, false);
    let stacked = |weight: fn(&ch05_causal::CausalAttention) -> &Linear| {
        let heads = wrapper.heads.iter();
        let weights: Vec<&Tensor> = heads.map(|h| &weight(h).weight).collect();
        Linear::from_parameters(cat(&weights, 0), None)
    };
    mha_split.w_query = stacked(|h| &h.w_query);
    mha_split.w_key = stacked(|h| &h.w_key);
    mha_split.w_value = stacked(|h| &h.w_value);
    mha_split.out_proj = Linear::from_parameters(eye(4), Some(zeros(&[4])));
    let split_out = mha_split.forward(&batch);
    let step = story.step(
        "The split version with the wrapper's weights \
         and out_proj = identity",
    );
    step.print(&split_out);
    step.print(format!(
        "allclose(split, wrapper): {}",
        python_bool(split_out.allclose_default(&wrapper_out))
    ));
    // ANCHOR_END: equivalence

    // Politi's article: multi-head attention with einsum.
    let words = ["my", "name", "is", "marcello", "politi"];
    // ANCHOR: einsum
    manual_seed(seed.or(0));
    let tokenized_sentence = my_name_ids();
    let embed = Embedding::new(10, 16);
    let sentence_embed = lookup(&embed.weight, &tokenized_sentence); // [5, 16]
    let d = sentence_embed.size(1);
    let h = 4;
    let d_k = d / h;
    let w_query = rand(&[h, d, d_k]); // one d × d_k matrix per head
    let w_key = rand(&[h, d, d_k]);
    let w_value = rand(&[h, d, d_k]);
    let w_output = rand(&[d, d]); // the output projection

    let queries = einsum_project(&sentence_embed, &w_query); // [h, seq, d_k]
    let keys = einsum_project(&sentence_embed, &w_key);
    let values = einsum_project(&sentence_embed, &w_value);
    let step = story.step("Queries, keys and values of every head with einsum");
    step.print_shape("queries.shape", &queries);
    step.print_shape("keys.shape", &keys);
    step.print_shape("values.shape", &values);

    let scores = einsum_scores(&queries, &keys); // [h, seq, seq]
    let attention_weights = scores.softmax(-1);
    let step = story.step("Attention scores and weights of every head");
    step.print_shape("scores.shape", &scores);
    step.print_shape("attention_weights.shape", &attention_weights);
    step.heatmap("head", &attention_weights, &words, &words)?;

    let head_outputs = einsum_head_outputs(&attention_weights, &values); // [h, seq, d_k]
    story.step("Head outputs").print(head_outputs.shape());

    let concatenated = concat_heads(&head_outputs); // [seq, h · d_k]
    story
        .step("Heads concatenated per token")
        .print(concatenated.shape());

    let multihead_output = concatenated.matmul(&w_output); // [seq, d]
    // The export shows "...:n": the backslash of "\n" was lost.
    story.step("Output projection, token 1").print(format!(
        "Multi-head attention output for token1:\n {}",
        multihead_output.get(0)
    ));
    // ANCHOR_END: einsum

    // Sum's article: the blog post's six tokens as q = k = v, shaped (batch 1, heads 1, 6, 3).
    // ANCHOR: sdpa_print
    let x = inputs.view(&[1, 1, 6, 3]);
    let (output, weights) = scaled_dot_product_attention(&x, &x, &x, None);
    let step = story.step("Scaled_dot_product_attention without a mask");
    step.print_shape("output.shape", &output);
    step.print_shape("weights.shape", &weights);
    step.print(format!("weights: {weights}"));
    step.print(format!("output: {output}"));
    step.heatmap("no mask", &weights, &WORDS, &WORDS)?;

    // Sum's article keeps the places where the mask is 1, so a causal mask is tril.
    let causal_mask = ones(&[6, 6]).tril(0);
    let allowed = causal_mask.bool();
    let (output, weights) = scaled_dot_product_attention(&x, &x, &x, Some(&allowed));
    let step = story.step("Scaled_dot_product_attention with a causal mask");
    step.print(format!("mask: {causal_mask}"));
    step.print(format!("weights: {weights}"));
    step.print(format!("output: {output}"));
    step.heatmap("causal mask", &weights, &WORDS, &WORDS)?;
    // ANCHOR_END: sdpa_print

    // ANCHOR: qkv_print
    manual_seed(seed.or(123));
    let x = rand(&[2, 3, 4]);
    let mha_qkv = MultiHeadAttentionQkv::new(4, 2);
    let out = mha_qkv.forward(&x, &x, &x, None);
    let step = story.step(format!(
        "MultiHeadAttention(d_model=4, n_heads=2), self-attention (manual_seed({}))",
        seed.or(123)
    ));
    step.print(format!("x: {x}"));
    step.print_shape("out.shape", &out);
    step.print(format!("out: {out}"));

    let out = mha_qkv.forward(&x, &x, &x, Some(&ones(&[3, 3]).tril(0).bool()));
    story
        .step("The same with a causal mask")
        .print(format!("out: {out}"));
    // ANCHOR_END: qkv_print

    Ok(story)
}
