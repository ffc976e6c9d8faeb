//! The chapter's printed steps, in the order of the reference script
//! `reference/ch17_inference.py`.

use ch15_modern_layer::model::generate_cached;
use ch15_modern_layer::{Recipe, TinyModel};
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, Tensor, cat, manual_seed};

use crate::ledger::CARDS;
use crate::mla::Mla;
use crate::paged::BlockPool;
use crate::paged_decode::{prefill_paged, step_paged};
use crate::setup::{
    BLOCK_SIZE, CONFIG, DRAFT_LAYERS, K, MLA, MLA_TOKENS, N_BLOCKS, N_NEW,
    N_SPECULATE, PROMPT, SYSTEM, USER, recipe,
};
use crate::speculative::speculate_greedy;
use crate::speculative_sampling::speculate_sampled;

/// `[1, n]` token ids.
fn ids(tokens: &[i64]) -> Tensor<i64> {
    Tensor::from_vec(tokens.to_vec(), &[1, tokens.len()])
}

/// Whether two tensors hold the same bits.
///
/// # Shapes
/// Any two tensors.
fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    a.shape() == b.shape()
        && a.to_vec()
            .iter()
            .zip(b.to_vec())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// A table as Python prints a list.
fn list(values: &[usize]) -> String {
    format!("{values:?}")
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 2026.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 17: Attention at inference time");
    let recipe = recipe();
    let (target, draft) = two_models(&mut story, seed);
    paged_batch(&mut story, &target, &recipe)?;
    copy_on_write(&mut story, &target, &recipe)?;
    speculative_decoding(&mut story, seed, &target, &draft, &recipe);
    latent_attention(&mut story, seed);
    cache_per_token(&mut story);
    Ok(story)
}

/// The target, and the draft made of its first layers.
fn two_models(story: &mut Narrative, seed: Seed) -> (TinyModel, TinyModel) {
    // ANCHOR: models
    manual_seed(seed.or(2026));
    let target = TinyModel::new(CONFIG);
    manual_seed(seed.or(2026));
    let mut draft = TinyModel::new(CONFIG);
    draft.layers.truncate(DRAFT_LAYERS); // the target's embedding, first layers and head
    // ANCHOR_END: models
    let step = story.step(format!("Two models (manual_seed({}))", seed.or(2026)));
    step.print(format!(
        "target: vocab {}, d_model {}, {} layers, all global",
        CONFIG.vocab_size, CONFIG.d_model, CONFIG.n_layers
    ));
    step.print(format!(
        "        {} query heads, {} key/value heads, d_ff {}",
        CONFIG.n_heads, CONFIG.n_kv_heads, CONFIG.d_ff
    ));
    step.print(format!(
        "draft: the target's embedding, its first {DRAFT_LAYERS} of {} layers, final norm and head",
        CONFIG.n_layers
    ));

    (target, draft)
}

/// Four requests with one system prompt, prefilled and decoded through one paged cache.
fn paged_batch(
    story: &mut Narrative,
    target: &TinyModel,
    recipe: &Recipe,
) -> Result<()> {
    // A batch of requests sharing a system prompt.
    // ANCHOR: batch
    let mut pool = BlockPool::new(N_BLOCKS, BLOCK_SIZE, CONFIG.n_layers)?;
    let prompts: Vec<Vec<i64>> = USER
        .iter()
        .map(|user| [&SYSTEM[..], user].concat())
        .collect();
    let mut seqs = Vec::new();
    let mut next = Vec::new();
    let mut logits = Vec::new();
    for prompt in &prompts {
        let (seq, last) = prefill_paged(target, &mut pool, prompt, recipe)?;
        next.push(last.argmax_dim(-1, true).item());
        logits.push(vec![last]);
        seqs.push(seq);
    }
    // ANCHOR_END: batch
    let step = story.step(format!(
        "A paged cache: {N_BLOCKS} blocks of {BLOCK_SIZE} tokens, four requests with one system prompt"
    ));
    step.print(format!("system prompt: {:?}", SYSTEM));
    for (r, (prompt, seq)) in prompts.iter().zip(&seqs).enumerate() {
        step.print(format!(
            "request {r}: {} tokens, block table {}",
            prompt.len(),
            list(&seq.table)
        ));
    }
    step.print(format!(
        "prefix cache: {} of {} full prompt blocks found (hit rate {:.2})",
        pool.hits,
        pool.lookups,
        pool.hits as f64 / pool.lookups as f64
    ));
    step.print(format!("blocks in use: {} of {N_BLOCKS}", pool.used()));

    // ANCHOR: decode_batch
    for _ in 1..N_NEW {
        for (r, seq) in seqs.iter_mut().enumerate() {
            let last = step_paged(target, &mut pool, seq, next[r], recipe)?;
            next[r] = last.argmax_dim(-1, true).item();
            logits[r].push(last);
        }
    }
    // ANCHOR_END: decode_batch
    let step = story.step(format!(
        "Decoding the batch, {N_NEW} tokens each, through the block tables"
    ));
    let mut all_equal = true;
    for (r, (prompt, seq)) in prompts.iter().zip(&seqs).enumerate() {
        let alone = generate_cached(
            target,
            &ids(prompt),
            N_NEW,
            recipe,
            TinyModel::forward_row_by_row,
        );
        let mut tokens = seq.tokens[prompt.len()..].to_vec();
        tokens.push(next[r]);
        let equal = ids(&tokens).to_vec()
            == alone.ids.narrow(1, prompt.len(), N_NEW).to_vec()
            && same_bits(&cat(&logits[r], 0), &alone.logits);
        all_equal &= equal;
        step.print(format!(
            "request {r}: new tokens {:?}, block table {}",
            tokens,
            list(&seq.table)
        ));
    }
    let unshared: usize = seqs.iter().map(|s| s.len().div_ceil(BLOCK_SIZE)).sum();
    step.print(format!(
        "blocks in use: {} (without sharing: {unshared})",
        pool.used()
    ));
    step.print(format!(
        "tokens and logits equal to decoding each request alone with a contiguous cache: {}",
        python_bool(all_equal)
    ));
    for seq in seqs {
        pool.release(seq);
    }
    step.print(format!(
        "after the batch ends: {} blocks in use",
        pool.used()
    ));
    let again = pool.admit(&prompts[0]);
    step.print(format!(
        "request 0 again: {} of its prompt tokens found in the freed blocks, table {}",
        again.len(),
        list(&again.table)
    ));
    pool.release(again);

    Ok(())
}

/// One prompt, two answers: the blocks shared until one is written.
fn copy_on_write(
    story: &mut Narrative,
    target: &TinyModel,
    recipe: &Recipe,
) -> Result<()> {
    // Copy-on-write: one prompt, two answers.
    // ANCHOR: fork
    let mut pool = BlockPool::new(N_BLOCKS, BLOCK_SIZE, CONFIG.n_layers)?;
    let (mut first, last) = prefill_paged(target, &mut pool, &PROMPT, recipe)?;
    let mut second = pool.fork(&first);
    let token = last.argmax_dim(-1, true).item();
    let other = (token + 1) % CONFIG.vocab_size as i64;
    // ANCHOR_END: fork
    let step = story.step("Copy-on-write: two answers to one prompt");
    step.print(format!(
        "prompt {:?}: table {}, forked: table {}",
        PROMPT,
        list(&first.table),
        list(&second.table)
    ));
    let refs: Vec<usize> = first.table.iter().map(|&b| pool.blocks[b].refs).collect();
    step.print(format!("references per block: {}", list(&refs)));
    step_paged(target, &mut pool, &mut first, token, recipe)?;
    step.print(format!(
        "first answer appends {token}: table {} (copies so far: {})",
        list(&first.table),
        pool.copies
    ));
    step_paged(target, &mut pool, &mut second, other, recipe)?;
    step.print(format!(
        "second answer appends {other}: table {} (copies so far: {})",
        list(&second.table),
        pool.copies
    ));
    let shared_prefix = pool
        .gather(&first, 0)?
        .keys
        .narrow(2, 0, PROMPT.len())
        .contiguous();
    let other_prefix = pool
        .gather(&second, 0)?
        .keys
        .narrow(2, 0, PROMPT.len())
        .contiguous();
    step.print(format!(
        "both still read the prompt's keys, bit for bit: {}",
        python_bool(same_bits(&shared_prefix, &other_prefix))
    ));

    Ok(())
}

/// Greedy speculative decoding, speculative sampling, and draft lengths.
fn speculative_decoding(
    story: &mut Narrative,
    seed: Seed,
    target: &TinyModel,
    draft: &TinyModel,
    recipe: &Recipe,
) {
    // Speculative decoding.
    // ANCHOR: speculate
    let prompt = ids(&PROMPT);
    let spec = speculate_greedy(draft, target, &prompt, N_SPECULATE, K, recipe);
    let plain = generate_cached(
        target,
        &prompt,
        N_SPECULATE,
        recipe,
        TinyModel::forward_row_by_row,
    );
    // ANCHOR_END: speculate
    let step = story.step(format!(
        "Greedy speculative decoding, {K} draft tokens per target pass"
    ));
    for (i, round) in spec.rounds.iter().enumerate() {
        step.print(format!(
            "pass {}: draft {:?}, target {:?}, kept {} + 1",
            i + 1,
            round.drafted,
            round.target,
            round.accepted
        ));
    }
    step.print("speculative:").print(&spec.ids);
    step.print("plain greedy:").print(&plain.ids);
    step.print(format!(
        "equal: {}",
        python_bool(spec.ids.to_vec() == plain.ids.to_vec())
    ));
    step.print(format!(
        "acceptance rate {:.2}, {:.2} tokens per target pass ({} passes for {N_SPECULATE} tokens)",
        spec.acceptance_rate(),
        spec.tokens_per_pass(),
        spec.rounds.len()
    ));
    // ANCHOR: sampled
    manual_seed(seed.or(17));
    let sampled = speculate_sampled(draft, target, &prompt, N_SPECULATE, K, recipe);
    // ANCHOR_END: sampled
    let step = story.step(format!(
        "Speculative sampling, {K} draft tokens per target pass (manual_seed({}))",
        seed.or(17)
    ));
    for (i, round) in sampled.rounds.iter().enumerate() {
        step.print(format!(
            "pass {}: draft {:?}, kept {}, wrote {:?}",
            i + 1,
            round.drafted,
            round.accepted,
            round.target
        ));
    }
    step.print("sampled:").print(&sampled.ids);
    step.print(format!(
        "acceptance rate {:.2}, {:.2} tokens per target pass",
        sampled.acceptance_rate(),
        sampled.tokens_per_pass()
    ));
    let step = story.step("Draft length against target passes");
    for k in 1..=4 {
        let spec = speculate_greedy(draft, target, &prompt, N_SPECULATE, k, recipe);
        step.print(format!(
            "k = {k}: acceptance rate {:.2}, {:.2} tokens per target pass",
            spec.acceptance_rate(),
            spec.tokens_per_pass()
        ));
    }
}

/// Multi-head latent attention: its cache, and its naive and absorbed paths.
fn latent_attention(story: &mut Narrative, seed: Seed) {
    // ANCHOR: mla
    manual_seed(seed.or(2026));
    let mla = Mla::new(MLA);
    let x = shared::randn(&[1, MLA_TOKENS, MLA.d_model]);
    let naive = mla.forward_naive(&x);
    let mut cache = None;
    let absorbed: Vec<Tensor> = (0..MLA_TOKENS)
        .map(|t| mla.step_absorbed(&x.narrow(1, t, 1), t, &mut cache))
        .collect();
    let absorbed = cat(&absorbed, 1);
    // ANCHOR_END: mla
    let step = story.step(format!(
        "Multi-head latent attention (manual_seed({}))",
        seed.or(2026)
    ));
    step.print(format!(
        "d_model {}, {} heads, query/key {} + RoPE {} per head, value {} per head, latent {}",
        MLA.d_model, MLA.n_heads, MLA.nope_dim, MLA.rope_dim, MLA.v_dim, MLA.latent_dim
    ));
    step.print(format!(
        "naive cache per token: {} heads x ({} + {}) key + {} heads x {} value = {} values",
        MLA.n_heads,
        MLA.nope_dim,
        MLA.rope_dim,
        MLA.n_heads,
        MLA.v_dim,
        MLA.n_heads * (MLA.nope_dim + MLA.rope_dim + MLA.v_dim)
    ));
    step.print(format!(
        "latent cache per token: latent {} + RoPE key {} = {} values",
        MLA.latent_dim,
        MLA.rope_dim,
        MLA.latent_dim + MLA.rope_dim
    ));
    let latent = cache.expect("six tokens cached");
    step.print_shape("cached latent", &latent.latent);
    step.print_shape("cached RoPE key", &latent.rope_key);
    let step = story.step("The naive path and the absorbed path");
    step.print("naive (every latent expanded), last token, first 6 features:");
    step.print(naive.select(1, -1).slice(1, ..6));
    step.print(
        "absorbed (W_UK in the query, W_UV after the weights), last token, first 6 features:",
    );
    step.print(absorbed.select(1, -1).slice(1, ..6));
    step.print(format!(
        "equal: {}",
        python_bool(same_bits(&naive, &absorbed))
    ));
    let gap = (&naive - &absorbed).abs().max().item() as f64;
    let order = gap.log10().floor() as i32; // the gap's last digits vary with the machine
    step.print(format!(
        "largest difference over all tokens: between 1e{order} and 1e{}",
        order + 1
    ));
}

/// The cache per token of real models, by kind of attention.
fn cache_per_token(story: &mut Narrative) {
    let step = story.step("Cache per token, bfloat16");
    step.print(
        "MHA, GQA, MQA: keys and values, 2 x key/value heads x head width per layer",
    );
    step.print(
        "MLA: the latent and the shared RoPE key, kv_lora_rank + qk_rope_head_dim per layer",
    );
    for card in CARDS {
        step.print(format!(
            "{} ({}): {} layers x {} values x 2 bytes = {} bytes",
            card.name,
            card.attention,
            card.layers,
            card.per_layer(),
            card.bytes_per_token(2)
        ));
    }
}
