//! The chapter's printed steps, in the order of the reference script
//! `reference/ch23_lora.py`: everything on chapter 20's tiny checkpoint, which the
//! workspace holds, so the default run needs no download and takes seconds.

use ch20_real_model::loader::{Loaded, load};
use course::narrative::python_bool;
use course::{Narrative, Seed, Step};
use shared::{Result, Tensor};

use crate::adapter::Adapter;
use crate::count::trainable_numbers;
use crate::examples::Encoder;
use crate::forward::forward;
use crate::setup::{
    BATCH, RANK, SEED, SMOLLM2_D_KV, SMOLLM2_D_MODEL, SMOLLM2_LAYERS, TINY, TINY_LR,
    TINY_STEPS, in_workspace,
};
use crate::task::Sums;
use crate::tiny::{EXAMPLE, TinyRun};

/// Held-out sums listed.
const LISTED: usize = 5;

/// Runs the chapter on the tiny checkpoint and returns what it prints.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut run = TinyRun::new(seed.or(SEED))?;
    let mut story =
        Narrative::new("Chapter 23: Teaching SmolLM2 arithmetic with LoRA");
    the_task(
        story.step("The task: sums, and a held-out set never trained on"),
        &run.sums,
        &run.encoder,
    )?;
    the_adapters(
        story.step("Low-rank adapters beside the queries and the values"),
        &run.loaded,
        &run.adapter,
    );
    let ids = run.example_ids()?;
    let before = forward(&run.loaded.model, &run.loaded.recipe, &run.adapter, &ids);
    short_run(
        story.step("A short run on the tiny checkpoint, its losses PyTorch + PEFT's"),
        &mut run,
    )?;
    merged(
        story.step("The adapters merged into the weights"),
        &run,
        &ids,
        &before,
    )?;
    Ok(story)
}

/// The split, and one question as the model reads it.
fn the_task(step: &mut Step, sums: &Sums, encoder: &Encoder) -> Result<()> {
    let total = sums.train.len() + sums.held_out.len();
    step.print(format!(
        "sums: {total}, held out: {}, trained on: {}",
        sums.held_out.len(),
        sums.train.len()
    ));
    let listed: Vec<String> = sums.held_out[..LISTED]
        .iter()
        .map(|s| format!("{} + {}", s.a, s.b))
        .collect();
    step.print(format!("the first held-out sums: {}", listed.join(", ")));
    let both = sums
        .held_out
        .iter()
        .filter(|s| sums.train.binary_search(s).is_ok())
        .count();
    step.print(format!("held-out sums among the training sums: {both}"));
    let example = encoder.example(&EXAMPLE)?;
    step.print(format!(
        "the question {:?} and a new line: {} tokens, labelled -100 (not learned)",
        EXAMPLE.question(),
        example.prompt_len
    ));
    step.print(format!(
        "the answer {:?} and the end of the reply: {} tokens, learned",
        EXAMPLE.answer(),
        example.ids.len() - example.prompt_len
    ));
    Ok(())
}

/// The adapters' sizes: on the tiny checkpoint, and on SmolLM2.
fn the_adapters(step: &mut Step, tiny: &Loaded, adapter: &Adapter) {
    let c = &adapter.config;
    step.print(format!(
        "rank {}, alpha {:?}, scale alpha / r = {:.1}",
        c.rank,
        c.alpha,
        c.alpha / c.rank as f64
    ));
    step.print(format!(
        "tiny checkpoint ({} layers): {} numbers train, {} stay frozen",
        tiny.model.layers.len(),
        adapter.trainable(),
        own_numbers(tiny)
    ));
    let smollm2 = trainable_numbers(
        RANK,
        SMOLLM2_LAYERS,
        &[
            (SMOLLM2_D_MODEL, SMOLLM2_D_MODEL),
            (SMOLLM2_D_KV, SMOLLM2_D_MODEL),
        ],
    );
    step.print(format!(
        "SmolLM2-135M ({SMOLLM2_LAYERS} layers): {smollm2} numbers train"
    ));
}

/// The model's own parameters, the tied head counted once.
fn own_numbers(loaded: &Loaded) -> usize {
    let m = &loaded.model;
    let norm = |n: &shared::nn::RMSNorm| n.weight.as_ref().map_or(0, |w| w.numel());
    let layers: usize = m
        .layers
        .iter()
        .map(|l| {
            let a = &l.attn;
            let f = &l.ffn;
            let projections = [
                &a.w_query,
                &a.w_key,
                &a.w_value,
                &a.out_proj,
                &f.w_gate,
                &f.w_up,
                &f.w_down,
            ];
            norm(&l.attn_norm)
                + norm(&l.ffn_norm)
                + projections.iter().map(|p| p.weight.numel()).sum::<usize>()
        })
        .sum();
    let head = if loaded.config.tied_embeddings {
        0
    } else {
        m.lm_head.weight.numel()
    };
    m.tok_emb.weight.numel() + layers + norm(&m.final_norm) + head
}

/// A few steps of fine-tuning, every loss printed.
fn short_run(step: &mut Step, run: &mut TinyRun) -> Result<()> {
    step.print(format!(
        "{TINY_STEPS} steps of {BATCH} questions, AdamW at learning rate {TINY_LR}, the \
         loss on the answers' tokens"
    ));
    for (i, loss) in run.train()?.iter().enumerate() {
        step.print(format!("step {}: loss {loss:.4}", i + 1));
    }
    Ok(())
}

/// The merged model's logits against the adapters beside the weights.
fn merged(
    step: &mut Step,
    run: &TinyRun,
    ids: &Tensor<i64>,
    before: &Tensor,
) -> Result<()> {
    let beside = forward(&run.loaded.model, &run.loaded.recipe, &run.adapter, ids);
    let mut tiny =
        load(&in_workspace(TINY), |_, _| {}).map_err(crate::LoraError::from)?;
    run.adapter.merge_into(&mut tiny.model);
    let (merged, _) = tiny.model.forward(ids, &tiny.recipe);
    let moved = (&beside - before).abs().max().item();
    let apart = (&merged - &beside).abs().max().item();
    step.print(format!(
        "the trained adapters moved the logits of {:?}: {}",
        EXAMPLE.question(),
        python_bool(moved > 0.0)
    ));
    step.print(format!(
        "merged into the weights, the same logits within rounding: {}",
        python_bool(apart <= 1e-4 * beside.abs().max().item())
    ));
    Ok(())
}
