//! The chapter's printed steps, in the order of the reference script
//! `reference/ch16_flex_attention.py`.

use course::{Narrative, Seed};
use shared::{Result, Tensor, manual_seed, randn};

use crate::alibi::{alibi, alibi_slopes};
use crate::backward::{ScoreModGrad, unchanged_grad};
use crate::block_mask::{BlockMask, TileKind};
use crate::formula::flex_attention;
use crate::pytorch_order::flex_attention_backward_in_pytorch_order;
use crate::recipes::{
    MaskMod, ScoreMod, causal, causal_window, document_mask, no_mask, prefix_lm,
    sliding_window, softcap, unchanged,
};
use crate::setup::{CAP, DOCUMENTS, PREFIX, SIZES, TILE, WINDOW};
use crate::softcap_grad::softcap_grad;

/// One recipe's step: its block mask, its tile counts, two rows of its output and the mean
/// magnitude of all of it.
fn recipe_step(
    story: &mut Narrative,
    name: &str,
    [q, k, v]: [&Tensor; 3],
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod + Clone,
) -> Result<()> {
    let [_, _, _, tokens, _] = SIZES;
    let block_mask = BlockMask::new(mask_mod.clone(), 1, 1, tokens, tokens, TILE)?;
    let out = flex_attention(q, k, v, score_mod, mask_mod)?;
    let step = story.step(name);
    step.print("tiles (F: full, P: partial, .: empty):");
    for line in block_mask.grid(0, 0) {
        step.print(line);
    }
    step.print(format!(
        "full {}, partial {}, empty {}",
        block_mask.count(TileKind::Full),
        block_mask.count(TileKind::Partial),
        block_mask.count(TileKind::Empty)
    ));
    let rows = Tensor::from_vec(vec![4i64, 7], &[2]);
    step.print("out[0, 0, [4, 7]] (head 0, queries 4 and 7):")
        .print(out.select(0, 0).select(0, 0).index_select(0, &rows));
    step.print(format!(
        "mean |out| over its {} numbers: {}",
        out.numel(),
        out.abs().mean()
    ));
    Ok(())
}

/// One recipe's backward step: two rows of the gradient of `k` and the mean magnitudes of
/// the three gradients. The gradients are the formula's, with softmax's backward in
/// PyTorch's order of additions ([`crate::pytorch_order`]), so every bit is autograd's.
fn backward_step(
    story: &mut Narrative,
    name: &str,
    [q, k, v, grad_out]: [&Tensor; 4],
    score_mod: impl ScoreMod,
    score_mod_grad: impl ScoreModGrad,
    mask_mod: impl MaskMod,
) -> Result<()> {
    let grads = flex_attention_backward_in_pytorch_order(
        q,
        k,
        v,
        grad_out,
        score_mod,
        score_mod_grad,
        mask_mod,
    )?;
    let step = story.step(format!("Backward, {name}"));
    let rows = Tensor::from_vec(vec![4i64, 7], &[2]);
    step.print("grad_k[0, 0, [4, 7]] (key/value head 0, keys 4 and 7):")
        .print(grads.k.select(0, 0).select(0, 0).index_select(0, &rows));
    for (label, grad) in [("q", &grads.q), ("k", &grads.k), ("v", &grads.v)] {
        step.print(format!("mean |grad_{label}|: {}", grad.abs().mean()));
    }
    Ok(())
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 16.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 16: FlexAttention");
    let [batch, heads, kv_heads, tokens, d] = SIZES;

    // ANCHOR: inputs
    manual_seed(seed.or(16));
    let q = randn(&[batch, heads, tokens, d]);
    let k = randn(&[batch, kv_heads, tokens, d]);
    let v = randn(&[batch, kv_heads, tokens, d]);
    // ANCHOR_END: inputs
    let step = story.step(format!(
        "Queries, keys and values (manual_seed({}))",
        seed.or(16)
    ));
    step.print_shape("q.shape", &q)
        .print_shape("k.shape", &k)
        .print_shape("v.shape", &v);
    step.print(format!(
        "query heads 0-1 read key/value head 0, heads 2-3 read head 1; tiles of {TILE} x {TILE}"
    ));

    let qkv = [&q, &k, &v];
    let documents: Vec<String> = DOCUMENTS.iter().map(|n| n.to_string()).collect();
    // ANCHOR: recipes
    recipe_step(&mut story, "no mask", qkv, unchanged, no_mask)?;
    recipe_step(&mut story, "causal", qkv, unchanged, causal)?;
    let name = format!("sliding window: |q - kv| < {WINDOW}");
    recipe_step(&mut story, &name, qkv, unchanged, sliding_window(WINDOW))?;
    let name = format!("causal, window of {WINDOW}");
    recipe_step(&mut story, &name, qkv, unchanged, causal_window(WINDOW))?;
    let name = format!(
        "document mask: documents of {} tokens, causal",
        documents.join(", ")
    );
    recipe_step(&mut story, &name, qkv, unchanged, document_mask(&DOCUMENTS))?;
    let name = format!("prefix-LM: the first {PREFIX} tokens see each other");
    recipe_step(&mut story, &name, qkv, unchanged, prefix_lm(PREFIX))?;
    let slopes = alibi_slopes(heads);
    recipe_step(&mut story, "ALiBi, causal", qkv, alibi(slopes), causal)?;
    let name = format!("softcap {CAP}, causal");
    recipe_step(&mut story, &name, qkv, softcap(CAP), causal)?;
    // ANCHOR_END: recipes

    let grad_out = randn(&[batch, heads, tokens, d]);
    story
        .step("Backward: the gradient of the output")
        .print_shape("grad_out.shape", &grad_out)
        .print(
            "the gradient of the output, drawn after v, the same for every recipe",
        );
    let qkvg = [&q, &k, &v, &grad_out];
    let slopes = alibi_slopes(heads);
    // ANCHOR: backward_recipes
    backward_step(
        &mut story,
        "causal",
        qkvg,
        unchanged,
        unchanged_grad,
        causal,
    )?;
    let name = format!("sliding window: |q - kv| < {WINDOW}");
    let window = sliding_window(WINDOW);
    backward_step(&mut story, &name, qkvg, unchanged, unchanged_grad, window)?;
    // ALiBi adds a bias that does not depend on the score: its derivative is 1.
    let name = "ALiBi, causal";
    backward_step(
        &mut story,
        name,
        qkvg,
        alibi(slopes),
        unchanged_grad,
        causal,
    )?;
    let name = format!("softcap {CAP}, causal");
    backward_step(
        &mut story,
        &name,
        qkvg,
        softcap(CAP),
        softcap_grad(CAP),
        causal,
    )?;
    // ANCHOR_END: backward_recipes
    Ok(story)
}
