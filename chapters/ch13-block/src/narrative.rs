//! The chapter's printed steps, in the order of the reference script
//! `reference/ch13_block.py`.

use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{GeluApproximate, Result, Tensor, arange, manual_seed, randn, stack};

use crate::block::TransformerBlock;
use crate::masked_attention::{attention_weights, safe_attention_weights};
use crate::masks::{
    causal, decoder_mask, hide_padded_keys, left_padding_mask, padding_mask,
};
use crate::parameters::{
    attention_parameter_count, attention_parameters, block_parameter_count,
    block_parameters, count, layer_norm_parameters, mlp_parameters,
};

/// Runs the chapter and returns what it prints; `seed` replaces the default seed 123.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 13: The transformer block");
    let block = the_block(&mut story, seed);
    the_three_attentions(&mut story, seed)?;
    parameter_counts(&mut story, &block);
    Ok(story)
}

/// GPT-2's block on a small batch, one sub-layer at a time, then pre- against post-norm.
fn the_block(story: &mut Narrative, seed: Seed) -> TransformerBlock {
    // The input first, then the block: with another order, the same seed draws other
    // numbers.
    // ANCHOR: block_setup
    manual_seed(seed.or(123));
    let x = randn(&[2, 6, 8]); // [batch, tokens, d_model]
    let block = TransformerBlock::new(8, 2, 6);
    // ANCHOR_END: block_setup
    let step = story.step(format!(
        "A batch of token vectors (manual_seed({}), randn)",
        seed.or(123)
    ));
    step.print_shape("x.shape", &x);
    step.print(format!("x: {x}"));

    let step = story.step("A GPT-2 block: d_model = 8, two heads, MLP 8 -> 32 -> 8");
    for (name, p) in block_parameters(&block) {
        step.print(format!("{name}: {:?}", p.sizes()));
    }

    // The forward pass once more, a line at a time with the block's own layers.
    // ANCHOR: block_steps
    let h = block.ln_1.forward(&x);
    let step = story.step("ln_1: every token's vector normalised");
    step.print_shape("ln_1(x).shape", &h);
    step.print(format!("ln_1(x): {h}"));

    let a = block.attn.forward(&h);
    let step = story.step("Causal attention on the normalised tokens");
    step.print_shape("attn(ln_1(x)).shape", &a);
    step.print("attn(ln_1(x)):").print(&a);

    let x1 = &x + &a;
    story.step("First residual: x + attn(ln_1(x))").print(&x1);

    let h2 = block.ln_2.forward(&x1);
    let up = block.mlp.c_fc.forward(&h2);
    let act = up.gelu(GeluApproximate::Tanh);
    let m = block.mlp.c_proj.forward(&act);
    let step =
        story.step("ln_2 and the MLP: Linear(8, 32), GELU (tanh), Linear(32, 8)");
    step.print_shape("ln_2(x).shape", &h2);
    step.print_shape("c_fc(...).shape", &up);
    step.print_shape("gelu(...).shape", &act);
    step.print_shape("c_proj(...).shape", &m);
    step.print(format!("mlp(ln_2(x)): {m}"));

    let out = &x1 + &m;
    let step = story.step("Second residual: the block's output");
    step.print_shape("out.shape", &out);
    step.print(format!("out: {out}"));
    step.print(format!(
        "same as block(x): {}",
        python_bool(block.forward(&x) == out)
    ));
    // ANCHOR_END: block_steps

    // ANCHOR: residual_stream
    let token = |t: &Tensor| t.get(0).get(5);
    let stream = stack(&[token(&x), token(&x1), token(&out)], 0);
    story
        .step("Token 5's residual stream: in, after attention, after the MLP")
        .print(stream);
    // ANCHOR_END: residual_stream

    // ANCHOR: gelu_forms
    let z = arange(-2.5f32, 2.5, 0.15625);
    let step = story.step("GELU, exact and tanh form, on -2.5 to 2.34375");
    step.print("gelu:").print(z.gelu(GeluApproximate::None));
    step.print("gelu_tanh:")
        .print(z.gelu(GeluApproximate::Tanh));
    // ANCHOR_END: gelu_forms

    story
        .step("Post-norm (the original Transformer) with the same weights")
        .print(block.forward_post_norm(&x));
    block
}

/// The masks of the encoder, the masked decoder and the cross-attention on a padded batch,
/// then a fully masked row and its fixes.
fn the_three_attentions(story: &mut Narrative, seed: Seed) -> Result<()> {
    // ANCHOR: padded_batch
    manual_seed(seed.or(123));
    let src = randn(&[2, 4, 4]); // encoder input: 4 tokens, the second sequence has 2
    let tgt = randn(&[2, 3, 4]); // decoder input: 3 tokens, the second sequence has 2
    let src_lengths = Tensor::from_vec(vec![4i64, 2], &[2]);
    let tgt_lengths = Tensor::from_vec(vec![3i64, 2], &[2]);
    let src_pad = padding_mask(&src_lengths, 4);
    let tgt_pad = padding_mask(&tgt_lengths, 3);
    // ANCHOR_END: padded_batch
    let step = story.step(format!(
        "A padded batch (manual_seed({}), randn)",
        seed.or(123)
    ));
    step.print_shape("src.shape", &src);
    step.print_shape("tgt.shape", &tgt);
    step.print(format!("src_pad: {src_pad}"));
    step.print(format!("tgt_pad: {tgt_pad}"));

    // One head and no projections: q = k = v = the tokens, [b, 1, tokens, d].
    let src_h = src.unsqueeze(1);
    let tgt_h = tgt.unsqueeze(1);
    let inf = f32::NEG_INFINITY;

    // ANCHOR: three_masks
    let enc_hidden = hide_padded_keys(&src_pad); // [b, 1, 1, k]
    let step = story.step("Encoder self-attention: padding mask only, (b, 1, 1, k)");
    step.print_shape("enc_hidden.shape", &enc_hidden);
    let weights = attention_weights(&src_h, &src_h, &enc_hidden, inf);
    step.print(format!("weights: {weights}"));
    step.heatmap_indexed("encoder, sequence", &weights.select(1, 0))?;

    let dec_hidden = decoder_mask(&tgt_pad); // causal [1, 1, q, k] | padding [b, 1, 1, k]
    let step = story.step("Masked decoder self-attention: causal | padding");
    step.print_shape("causal.shape", &causal(3));
    step.print_shape("dec_hidden.shape", &dec_hidden);
    step.print(format!("dec_hidden: {dec_hidden}"));
    let weights = attention_weights(&tgt_h, &tgt_h, &dec_hidden, inf);
    step.print(format!("weights: {weights}"));
    step.heatmap_indexed("decoder, sequence", &weights.select(1, 0))?;

    let cross_hidden = hide_padded_keys(&src_pad); // the encoder's keys, [b, 1, 1, k]
    let cross = attention_weights(&tgt_h, &src_h, &cross_hidden, inf);
    let step = story.step("Cross-attention: decoder queries, encoder padding");
    step.print_shape("cross_hidden.shape", &cross_hidden);
    step.print_shape("weights.shape", &cross);
    step.print(format!("weights: {cross}"));
    step.heatmap_indexed("cross, sequence", &cross.select(1, 0))?;
    // ANCHOR_END: three_masks

    // ANCHOR: fully_masked
    let left_pad = left_padding_mask(&tgt_lengths, 3);
    let left_hidden = &causal(3) | &hide_padded_keys(&left_pad);
    let weights = attention_weights(&tgt_h, &tgt_h, &left_hidden, inf);
    let step = story.step("A fully masked row: the decoder batch padded on the left");
    step.print(format!("left_pad: {left_pad}"));
    step.print(format!("left_hidden[1, 0]: {}", left_hidden.get(1).get(0)));
    step.print(format!(
        "weights[1, 0] with -inf: {}",
        weights.get(1).get(0)
    ));

    let finite = attention_weights(&tgt_h, &tgt_h, &left_hidden, f32::MIN);
    let zeroed = safe_attention_weights(&tgt_h, &tgt_h, &left_hidden);
    let step =
        story.step("Two fixes: a finite fill value, or zeros after the softmax");
    step.print(format!("fill finfo(float32).min: {}", finite.get(1).get(0)));
    step.print(format!("-inf, then NaN -> 0: {}", zeroed.get(1).get(0)));
    let rest = |t: &Tensor| t.slice(2, 1..);
    step.print(format!(
        "same elsewhere: {} {}",
        python_bool(rest(&finite) == rest(&weights)),
        python_bool(zeroed.get(0) == weights.get(0))
    ));
    // ANCHOR_END: fully_masked
    step.heatmap_indexed("zeros after the softmax, sequence", &zeroed.select(1, 0))?;
    Ok(())
}

/// The chapter's block counted from its tensors, and GPT-2 small from the formulas.
fn parameter_counts(story: &mut Narrative, block: &TransformerBlock) {
    // ANCHOR: parameter_counts
    let step = story.step("Parameter counts");
    step.print(format!("our block: {}", count(&block_parameters(block))));
    let ln_1 = count(&layer_norm_parameters(&block.ln_1));
    let norms = ln_1 + count(&layer_norm_parameters(&block.ln_2));
    step.print(format!("  ln_1 + ln_2: {norms}"));
    step.print(format!(
        "  attn: {}",
        count(&attention_parameters(&block.attn))
    ));
    step.print(format!("  mlp: {}", count(&mlp_parameters(&block.mlp))));
    let gpt2_attention = attention_parameter_count(768, true);
    step.print(format!("GPT-2 small attention layer: {gpt2_attention}"));
    step.print(format!("GPT-2 small block: {}", block_parameter_count(768)));
    step.print(format!(
        "GPT-2 small, 12 blocks: {}",
        12 * block_parameter_count(768)
    ));
    // ANCHOR_END: parameter_counts
}
