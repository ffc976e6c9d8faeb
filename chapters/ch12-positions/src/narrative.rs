//! The chapter's printed steps, in the order of the reference script
//! `reference/ch12_positions.py`.

use ch01_embeddings::inputs::your_journey;
use ch04_trainable::SelfAttentionV2;
use ch05_causal::CausalAttention;
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, manual_seed, randn, tensor};

use crate::frequencies::{inv_freq, rope_angles};
use crate::half_split::rope_half_split;
use crate::interleaved::rope_interleaved;
use crate::learned::TokenAndPositionEmbedding;
use crate::order::{inverse_permutation, permute_tokens};
use crate::pairing::half_split_features;
use crate::sinusoidal::sinusoidal_encoding;

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 12: Positions and RoPE");
    let inputs = your_journey();

    // ANCHOR: shuffled
    manual_seed(seed.or(789));
    let sa_v2 = SelfAttentionV2::new(3, 2, false);
    let out = sa_v2.forward(&inputs);
    story
        .step(format!(
            "Self-attention on the six tokens (SelfAttention_v2, manual_seed({}))",
            seed.or(789)
        ))
        .print(&out);

    let order = tensor!([5i64, 2, 0, 4, 1, 3]);
    let out_permuted = sa_v2.forward(&permute_tokens(&inputs, &order));
    story
        .step("The same tokens in another order")
        .print(format!("order: {order}"))
        .print(&out_permuted)
        .print(format!(
            "allclose with the outputs in that order: {}",
            python_bool(out_permuted.allclose_default(&permute_tokens(&out, &order)))
        ));
    // ANCHOR_END: shuffled

    // ANCHOR: causal
    manual_seed(seed.or(123));
    let ca = CausalAttention::new(3, 2, 6, 0.0, false);
    let causal = ca.forward(&inputs.unsqueeze(0)).select(0, 0);
    let causal_permuted = ca
        .forward(&permute_tokens(&inputs, &order).unsqueeze(0))
        .select(0, 0);
    let causal_in_that_order = permute_tokens(&causal, &order);
    story
        .step(format!(
            "With a causal mask the order matters (CausalAttention, manual_seed({}))",
            seed.or(123)
        ))
        .print(&causal_permuted)
        .print(format!(
            "allclose with the outputs in that order: {}",
            python_bool(causal_permuted.allclose_default(&causal_in_that_order))
        ));
    // ANCHOR_END: causal

    // ANCHOR: sinusoidal
    story
        .step("Sinusoidal position encodings (6 positions, d = 6)")
        .print(format!("inv_freq: {}", inv_freq(6, 10000.0)))
        .print(sinusoidal_encoding(6, 6));
    // ANCHOR_END: sinusoidal

    // ANCHOR: learned
    manual_seed(seed.or(123));
    let embedding = TokenAndPositionEmbedding::new(6, 6, 8);
    let token_ids = tensor!([5i64, 3, 4, 5]); // step with one step
    let tokens = embedding.tok_emb.forward(&token_ids);
    let x_pos = embedding.forward(&token_ids);
    story
        .step(format!(
            "Learned position embeddings (manual_seed({}))",
            seed.or(123)
        ))
        .print(&x_pos)
        .print(format!(
            "same token vector for both 'step': {}",
            python_bool(tokens.get(0) == tokens.get(3))
        ))
        .print(format!(
            "same input vector for both 'step': {}",
            python_bool(x_pos.get(0) == x_pos.get(3))
        ));
    // ANCHOR_END: learned

    // ANCHOR: rope
    manual_seed(seed.or(123));
    let x = randn(&[1, 2, 6, 8]); // [batch, heads, tokens, head_dim]
    story
        .step(format!(
            "Queries for RoPE: randn(1, 2, 6, 8) (manual_seed({}))",
            seed.or(123)
        ))
        .print(&x);
    story
        .step("Angles m * theta_i (6 positions, 4 pairs)")
        .print(rope_angles(6, 8, 10000.0));

    let half_split = rope_half_split(&x, 10000.0);
    story
        .step("RoPE, half-split pairs (Hugging Face's Llama, GPT-NeoX)")
        .print(&half_split);
    let interleaved = rope_interleaved(&x, 10000.0);
    story
        .step("RoPE, interleaved pairs (Meta's Llama)")
        .print(&interleaved)
        .print(format!(
            "allclose with half-split: {}",
            python_bool(interleaved.allclose_default(&half_split))
        ));
    // ANCHOR_END: rope

    // ANCHOR: same_rotation
    let features = half_split_features(8);
    let back = inverse_permutation(&features);
    let through_half_split = rope_half_split(&x.index_select(-1, &features), 10000.0)
        .index_select(-1, &back);
    // Where a rotation cancels (1.4 - 1.4 = 0.0012), the rounding error is relative
    // to the terms and not to the small result: the default atol of 1e-8 would be
    // too strict.
    story
        .step("Interleaved = half-split on permuted features")
        .print(format!("features: {features}"))
        .print(format!("back: {back}"))
        .print(format!(
            "allclose with interleaved (atol=1e-6): {}",
            python_bool(through_half_split.allclose(&interleaved, 1e-5, 1e-6, false))
        ));
    // ANCHOR_END: same_rotation

    // ANCHOR: distance
    let q = x.get(0).get(0).get(0); // one query vector, [8]
    let k = x.get(0).get(1).get(0); // one key vector, [8]
    let q_at = rope_interleaved(&q.expand(&[6, 8]), 10000.0); // row m: q at position m
    let k_at = rope_interleaved(&k.expand(&[6, 8]), 10000.0); // row n: k at position n
    let scores = q_at.matmul(&k_at.t()); // scores[m, n] = (q at m) · (k at n)
    story
        .step("Scores depend only on the distance")
        .print(&scores)
        .heatmap_indexed("scores: q at m (rows), k at n (columns)", &scores)?;
    // ANCHOR_END: distance

    Ok(story)
}
