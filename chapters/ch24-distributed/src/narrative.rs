//! The chapter's printed steps, in the order of the reference script
//! `reference/ch24_distributed.py`.

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::arithmetic::Arithmetic;
use ch22_pretraining::batches::Batch;
use ch22_pretraining::config::Arch;
use ch22_pretraining::model::Model;
use ch22_pretraining::train::{apply_gradients, loss_and_gradients};
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, Tensor, manual_seed, randint, randn};

use crate::block_kind::{BlockKind, classify_block};
use crate::commas::commas;
use crate::counts::products_of_rank;
use crate::rank_tokens::positions_of;
use crate::ring::{Running, ring_attention_simulated, source_at};
use crate::ring_bytes::ring_bytes;
use crate::sequence_sums::numbers_per_token;
use crate::setup::{
    ARTICLE, D_MODEL, SIZES, STEP_LAYOUT, Sizes, WORLD, step_config, step_settings,
};
use crate::shards::{Layout, chunk_len};
use crate::step_agreement::{attention_steps, gradients_agree, weights_agree};
use crate::tensor_parallel::{
    Projections, all_heads, rank_partial, sum_in_rank_order,
};
use crate::training_step::{OneProcess, loss_and_gradients_across_ranks};
use crate::transfer::{all_gather_simulated, kv_bytes_held};
use crate::ulysses::{causal_attention, ulysses_simulated};

/// The head and token whose merge the chapter follows: the last token sees every block.
const HEAD: usize = 0;

/// The largest difference between two tensors of the same shape.
fn largest_gap(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).abs().max().item()
}

/// The merge of the last token's row on the rank that holds it, step by step.
fn ring_step(
    story: &mut Narrative,
    [q, k, v]: [&Tensor; 3],
    layout: Layout,
    one_process: &Tensor,
) -> Result<Tensor> {
    let Sizes { tokens, .. } = SIZES;
    let len = chunk_len(tokens, WORLD, layout)?;
    let token = tokens - 1;
    let chunk = token / len;
    let rank = (0..WORLD)
        .find(|&r| layout.chunks_of(r, WORLD).contains(&chunk))
        .unwrap_or(0);
    let slot = layout
        .chunks_of(rank, WORLD)
        .iter()
        .position(|&c| c == chunk)
        .unwrap_or(0);
    let row = token - chunk * len;
    let mut lines = Vec::new();
    let out = ring_attention_simulated(
        q,
        k,
        v,
        WORLD,
        layout,
        |r, step, running: &Running| {
            if r != rank {
                return;
            }
            let source = source_at(r, step, WORLD);
            let kinds: Vec<&str> = layout
                .chunks_of(source, WORLD)
                .iter()
                .map(|&kv_chunk| match classify_block(chunk, kv_chunk) {
                    BlockKind::Skip => "skipped",
                    BlockKind::Diagonal => "diagonal",
                    BlockKind::Full => "full",
                })
                .collect();
            let Some(part) = &running[slot] else {
                lines.push(format!(
                    "step {step}: keys of rank {source} ({}): nothing yet",
                    kinds.join(", ")
                ));
                return;
            };
            let lse: f32 =
                part.lse.select(0, 0).select(0, HEAD).select(0, row).item();
            lines.push(format!(
                "step {step}: keys of rank {source} ({}): log-sum-exp so far {lse:.4}, out:",
                kinds.join(", ")
            ));
            let out = part.out.select(0, 0).select(0, HEAD).select(0, row);
            lines.push(out.to_string());
        },
    )?;
    let step = story.step(format!("The ring, {} shards", layout.name()));
    let held: Vec<String> = (0..WORLD)
        .map(|r| format!("{:?}", layout.chunks_of(r, WORLD)))
        .collect();
    step.print(format!(
        "{} chunks of {len} tokens; ranks 0 to {} hold chunks {}",
        layout.chunks(WORLD),
        WORLD - 1,
        held.join(", ")
    ));
    step.print(format!(
        "token {token}, head {HEAD} lives on rank {rank}; its merge, step by step:"
    ));
    for line in lines {
        step.print(line);
    }
    step.print("one process's causal attention, same row:")
        .print(one_process.select(0, 0).select(0, HEAD).select(0, token));
    step.print(format!(
        "whole output within 1e-6 of one process: {}",
        python_bool(largest_gap(&out, one_process) < 1e-6)
    ));
    Ok(out)
}

/// Products and bytes per rank at the article's sizes.
fn imbalance_step(story: &mut Narrative) {
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = ARTICLE;
    let step = story.step(format!(
        "Causal work per rank, {tokens} tokens, {heads} heads of {head_dim}, {WORLD} ranks"
    ));
    for layout in [Layout::Contiguous, Layout::Zigzag] {
        let products: Vec<u64> = (0..WORLD)
            .map(|r| products_of_rank(ARTICLE, WORLD, layout, r))
            .collect();
        let list: Vec<String> = products.iter().map(|&p| commas(p)).collect();
        let (least, most) = (products.iter().min(), products.iter().max());
        step.print(format!(
            "{} query-key products: {}",
            layout.name(),
            list.join(" / ")
        ));
        if let (Some(&least), Some(&most)) = (least, most) {
            step.print(format!(
                "  the busiest rank computes {:.2} times the least busy",
                most as f64 / least as f64
            ));
        }
    }
    step.print(format!(
        "bytes each rank sends in a ring pass (keys and values, float32): {}",
        commas(ring_bytes(tokens, heads, head_dim, WORLD))
    ));
    step.print(format!(
        "  with grouped-query attention, 2 key/value heads for the {heads} query heads: {}",
        commas(ring_bytes(tokens, 2, head_dim, WORLD))
    ));
}

/// All-gather against a ring pass: memory held, bytes sent, and the same bits.
fn transfer_step(
    story: &mut Narrative,
    [q, k, v]: [&Tensor; 3],
    ring: &Tensor,
) -> Result<()> {
    let gathered = all_gather_simulated(q, k, v, WORLD, Layout::Zigzag)?;
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = ARTICLE;
    let sent = commas(ring_bytes(tokens, heads, head_dim, WORLD));
    let step = story.step(format!(
        "Two ways to move keys and values, {tokens} tokens, {heads} heads of {head_dim}"
    ));
    step.print(format!(
        "bytes of keys and values one rank holds: all-gather {}, ring pass {}",
        commas(kv_bytes_held(ARTICLE, WORLD, true)),
        commas(kv_bytes_held(ARTICLE, WORLD, false))
    ));
    step.print(format!(
        "bytes one rank sends: all-gather {sent}, ring pass {sent}"
    ));
    step.print(format!(
        "messages: all-gather one collective before attending, ring pass {} sends",
        WORLD - 1
    ));
    step.print("  each beside one step's attention");
    step.print(format!(
        "all-gather equals the ring pass bit for bit (zigzag shards): {}",
        python_bool(gathered.to_vec() == ring.to_vec())
    ));
    Ok(())
}

/// Ulysses against one process.
fn ulysses_step(
    story: &mut Narrative,
    [q, k, v]: [&Tensor; 3],
    one_process: &Tensor,
) -> Result<()> {
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = SIZES;
    let out = ulysses_simulated(q, k, v, WORLD)?;
    let step = story.step("Ulysses: two all-to-alls");
    step.print(format!(
        "before: [1, {heads}, {}, {head_dim}] per rank (its tokens, every head)",
        tokens / WORLD
    ));
    step.print(format!(
        "after the first all-to-all: [1, {}, {tokens}, {head_dim}] (every token, its heads)",
        heads / WORLD
    ));
    step.print(format!(
        "equals one process bit for bit: {}",
        python_bool(out.to_vec() == one_process.to_vec())
    ));
    step.print(format!(
        "2 key/value heads on {WORLD} ranks: each key/value head copied to {} ranks",
        WORLD / 2
    ));
    Ok(())
}

/// Tensor-parallel heads: partial outputs and the order of their sum.
fn tensor_parallel_step(story: &mut Narrative) -> Result<()> {
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = SIZES;
    // Drawn after the queries, keys and values.
    let x = randn(&[tokens, D_MODEL]);
    let w = Projections::random(D_MODEL, heads, head_dim);
    let partials = (0..WORLD)
        .map(|r| rank_partial(&x, &w, heads, r, WORLD))
        .collect::<Result<Vec<Tensor>>>()?;
    let fixed = sum_in_rank_order(&partials);
    let again = sum_in_rank_order(&partials);
    let one = all_heads(&x, &w, heads)?;
    let step = story.step("Tensor-parallel heads");
    step.print(format!(
        "x: [{tokens}, {D_MODEL}]; each rank: {} of the {heads} heads, {} rows of the output projection",
        heads / WORLD,
        heads / WORLD * head_dim
    ));
    step.print("rank 0's partial output, token 0:")
        .print(partials[0].select(0, 0));
    step.print("the sum in rank order, token 0:")
        .print(fixed.select(0, 0));
    step.print(format!(
        "the same sum again, in rank order, equal bit for bit: {}",
        python_bool(fixed.to_vec() == again.to_vec())
    ));
    step.print(format!(
        "within 1e-5 of one process's single all-heads product: {}",
        python_bool(largest_gap(&fixed, &one) < 1e-5)
    ));
    Ok(())
}

/// Chapter 22's Llama and a batch of random token ids, drawn after `manual_seed(seed)`.
fn model_and_batch(seed: u64) -> Result<(Model, Batch)> {
    let config = step_config();
    manual_seed(seed);
    let model = Model::new(Arch::Llama, &config)?;
    let ids = randint(0, config.vocab_size, &[config.batch, config.context + 1]);
    let batch = Batch {
        x: ids.narrow(1, 0, config.context).contiguous(),
        y: ids.narrow(1, 1, config.context).contiguous(),
    };
    Ok((model, batch))
}

/// The first weights of the first row of a layer's query projection.
fn first_weights(model: &Model) -> Tensor {
    let (_, w) = &model.named_parameters()[2];
    w.select(0, 0).narrow(0, 0, 6)
}

/// One training step with the sequence cut across ranks, against chapter 22's.
fn training_step(story: &mut Narrative, seed: Seed) -> Result<()> {
    let config = step_config();
    let settings = step_settings();
    let (mut model, batch) = model_and_batch(seed.or(24))?;
    let (mut one_process, _) = model_and_batch(seed.or(24))?;
    let Model::Llama(llama) = &model else {
        return Err(shared::Error::InvalidArgument {
            op: "training_step",
            detail: "the step across ranks is written for the Llama model".into(),
        });
    };
    let ranks = OneProcess { world: WORLD };
    let (loss, grads) =
        loss_and_gradients_across_ranks(llama, &batch, &ranks, STEP_LAYOUT)?;
    let before = first_weights(&model);
    let norm = PytorchOrder::clip_grad_norm(&mut grads.clone(), settings.grad_clip);
    apply_gradients::<PytorchOrder>(
        &mut model,
        &mut settings.optimizer(),
        &settings,
        0,
        loss,
        grads.clone(),
    )?;
    let (theirs_loss, theirs) =
        loss_and_gradients::<PytorchOrder>(&one_process, &batch);
    apply_gradients::<PytorchOrder>(
        &mut one_process,
        &mut settings.optimizer(),
        &settings,
        0,
        theirs_loss,
        theirs.clone(),
    )?;
    let weights = |m: &Model| -> Vec<Tensor> {
        m.named_parameters()
            .into_iter()
            .map(|(_, p)| p.clone())
            .collect()
    };
    let tokens = config.context;
    let parameters: usize = grads.iter().map(Tensor::numel).sum();

    let step = story.step("A training step across ranks");
    step.print(format!(
        "chapter 22's Llama: {} layers, {} heads of {}, width {}, {} token ids (manual_seed({}))",
        config.n_layers,
        config.n_heads,
        config.head_dim(),
        config.d_model,
        config.vocab_size,
        seed.or(24)
    ));
    step.print(format!(
        "a batch of {} sequences of {tokens} tokens, {} shards on {WORLD} ranks:",
        config.batch,
        STEP_LAYOUT.name()
    ));
    for rank in 0..WORLD {
        let positions = positions_of(tokens, rank, WORLD, STEP_LAYOUT)?;
        step.print(format!("  rank {rank}: positions {positions:?}"));
    }
    step.print(format!(
        "numbers gathered on every rank for the sums over the sequence: {}",
        commas((numbers_per_token(&config) * config.batch * tokens) as u64)
    ));
    step.print(format!(
        "numbers in the gradients, for comparison: {}",
        commas(parameters as u64)
    ));
    step.print(format!("loss: {loss:.4}"));
    step.print(format!("gradient norm before clipping: {norm:.4}"));
    step.print("layers.0.attn.w_query.weight[0, :6] before the step:")
        .print(&before);
    step.print(format!("after one step of AdamW (lr {}):", settings.lr))
        .print(first_weights(&model));
    let steps = attention_steps(tokens, WORLD);
    step.print(
        "against chapter 22's one-process step, whose attention takes one softmax:",
    );
    step.print(format!(
        "  loss within 1e-6: {}",
        python_bool((loss - theirs_loss).abs() < 1e-6)
    ));
    step.print(format!(
        "  every gradient within {steps} float32 steps of its largest: {}",
        python_bool(gradients_agree(&grads, &theirs, steps))
    ));
    step.print(format!(
        "  every weight within the gap AdamW's step makes of the gradients' gaps: {}",
        python_bool(weights_agree(
            [&weights(&model), &weights(&one_process)],
            [&grads, &theirs],
            settings.lr,
            f64::from(settings.grad_clip),
        ))
    ));
    Ok(())
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 24.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 24: attention across machines");
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = SIZES;

    // ANCHOR: inputs
    manual_seed(seed.or(24));
    let q = randn(&[1, heads, tokens, head_dim]);
    let k = randn(&[1, heads, tokens, head_dim]);
    let v = randn(&[1, heads, tokens, head_dim]);
    // ANCHOR_END: inputs
    let step = story.step(format!(
        "Queries, keys and values (manual_seed({}))",
        seed.or(24)
    ));
    step.print_shape("q.shape", &q)
        .print_shape("k.shape", &k)
        .print_shape("v.shape", &v);
    step.print(format!("{WORLD} ranks, causal attention"));

    let qkv = [&q, &k, &v];
    let one_process = causal_attention(&q, &k, &v)?;
    ring_step(&mut story, qkv, Layout::Contiguous, &one_process)?;
    imbalance_step(&mut story);
    let zigzag = ring_step(&mut story, qkv, Layout::Zigzag, &one_process)?;
    transfer_step(&mut story, qkv, &zigzag)?;
    ulysses_step(&mut story, qkv, &one_process)?;
    tensor_parallel_step(&mut story)?;
    training_step(&mut story, seed)?;
    Ok(story)
}
