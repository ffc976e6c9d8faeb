//! The chapter's printed story, on the real model: one function per section.

use ch15_modern_layer::TinyModel;
use ch15_modern_layer::model::generate_cached;
use ch15_modern_layer::setup::samplers;
use ch17_inference::ledger::{Cached, ModelCard};
use ch19_induction_heads::scores::mean_weight_at_offset;
use course::narrative::{Narrative, Seed, Step};
use shared::Result;

use crate::ablation::{Ablation, Replacement, forward_with_ablation, random_head};
use crate::chat::{conversation, render};
use crate::cli::{Options, load_with_progress};
use crate::generate::{Choice, Limits, as_batch, generate, generate_side_by_side};
use crate::heads::{HeadScores, attention_maps, repeated_tokens, scan};
use crate::loader::Loaded;
use crate::lookup::speculate_lookup;
use crate::model::pack_weights;
use crate::reference::transformers_last_logits;
use crate::setup::*;
use crate::sink::sink_share;
use crate::streaming::{mean_loss, perplexity, streaming_recipe};
use crate::tokenizer::{decode, encode};

/// The narrative with the default options.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    narrative_with(seed, &Options::default())
}

/// Progress on stderr: the narrative takes seconds.
fn progress(what: &str) {
    eprintln!("... {what}");
}

/// The narrative, on the model `options.model` names.
pub fn narrative_with(seed: Seed, options: &Options) -> Result<Narrative> {
    let m = load_with_progress(options.model.as_ref())?;
    // Many prompts go through the model below: its weights are packed for them once.
    let _packed = pack_weights(&m.model);
    let mut story = Narrative::new("Chapter 20: a real model");
    model_card(&mut story, &m);
    progress("the first logits");
    first_logits(&mut story, &m)?;
    progress("a greedy answer");
    greedy_answer(&mut story, &m)?;
    progress("chapter 15's samplers");
    sampled(&mut story, &m, seed)?;
    progress("cached decoding against recomputing");
    cached_or_recomputed(&mut story, &m)?;
    progress("attention sinks");
    sinks(&mut story, &m)?;
    progress("speculative decoding");
    speculative(&mut story, &m)?;
    progress("induction heads");
    induction(&mut story, &m, seed)?;
    Ok(story)
}

fn model_card(story: &mut Narrative, m: &Loaded) {
    let c = &m.config;
    let card = ModelCard {
        name: "SmolLM2-135M",
        attention: "GQA",
        layers: c.n_layers,
        cached: Cached::KeysValues {
            kv_heads: c.n_kv_heads,
            head_dim: c.head_dim,
        },
    };
    let file = m
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    story
        .step("The model card")
        .print(format!("file: {file}"))
        .print(format!(
            "parameters: {} ({:.1} M)",
            c.parameter_count(),
            c.parameter_count() as f64 / 1e6
        ))
        .print(format!(
            "vocabulary: {} tokens (chapter 1's embedding: {} x {})",
            c.vocab_size, c.vocab_size, c.d_model
        ))
        .print(format!("layers: {} (chapter 15's layer)", c.n_layers))
        .print(format!(
            "query heads: {}, key/value heads: {}, head size: {} (chapter 14's GQA)",
            c.n_heads, c.n_kv_heads, c.head_dim
        ))
        .print(format!(
            "RoPE base: {} (chapter 12, chapter 15)",
            c.rope_theta
        ))
        // The file stores eps as a float32: printed as that float32, not as the float64
        // it widens to (9.999999747378752e-6).
        .print(format!(
            "RMSNorm eps: {:e}; SwiGLU width: {} (chapter 15)",
            c.rms_norm_eps as f32, c.d_ff
        ))
        .print(format!(
            "context: {} tokens; tied embeddings: {}",
            c.context_length, c.tied_embeddings
        ))
        .print(format!(
            "KV cache per token (chapter 17's ledger, float32): {} bytes",
            card.bytes_per_token(4)
        ));
}

fn first_logits(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let ids = encode(&m.tokenizer, PROMPT)?;
    let (logits, _) = m.model.forward(&as_batch(&ids), &m.recipe);
    let ours = logits.select(0, 0).select(0, -1);
    let step = story.step("The first logits, beside transformers'");
    step.print(format!(
        "prompt: {PROMPT:?} -> {} tokens {ids:?}",
        ids.len()
    ));
    let theirs = transformers_last_logits(0)?;
    let (_, order) = ours.topk(5, -1, true, true);
    step.print("token        ours      transformers");
    for id in order.to_vec() {
        let piece = decode(&m.tokenizer, &[id as u32])?;
        let (a, b) = (ours.get(id).item(), theirs.get(id).item());
        step.print(format!("{:<10} {a:>9.4} {b:>9.4}", format!("{piece:?}")));
    }
    // Printed to four decimals the columns agree; how far apart the two are below that is
    // a matter of rounding, not of attention, and transformers alone cannot print it: stderr.
    let diff = (&ours - &theirs).abs().max().item();
    eprintln!(
        "    largest difference from transformers over all {} logits: {diff:.1e}",
        ours.numel()
    );
    Ok(())
}

fn greedy_answer(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let template = m.chat_template.as_deref().unwrap_or_default();
    let text = render(template, &conversation(QUESTION, None), "", "")?;
    let ids = encode(&m.tokenizer, &text)?;
    let limits = Limits {
        max_new_tokens: ANSWER_TOKENS,
        eos: m.eos,
        context_length: m.config.context_length,
    };
    let new = generate(&m.model, &m.recipe, &ids, Choice::Greedy, &limits, |_| {})?;
    story
        .step("A greedy answer")
        .print(format!("user: {QUESTION}"))
        .print(format!(
            "({} prompt tokens through the chat template)",
            ids.len()
        ))
        .print(format!(
            "assistant: {}",
            decode(&m.tokenizer, &new)?.trim_end_matches("<|im_end|>")
        ));
    Ok(())
}

fn sampled(story: &mut Narrative, m: &Loaded, seed: Seed) -> Result<()> {
    let ids = encode(&m.tokenizer, PROMPT)?;
    let limits = Limits {
        max_new_tokens: SAMPLED_TOKENS,
        eos: m.eos,
        context_length: m.config.context_length,
    };
    let step = story.step("Chapter 15's samplers, now visibly different");
    step.print(format!("{PROMPT} ..."));
    // Greedy, then each sampler drawing after `manual_seed(seed)`: all the continuations
    // decoded side by side, each with the tokens it has alone.
    let mut names = vec!["greedy"];
    let mut choices = vec![Choice::Greedy];
    for (name, sampler) in samplers() {
        names.push(name);
        choices.push(Choice::Sample(sampler));
    }
    let continuations = generate_side_by_side(
        &m.model,
        &m.recipe,
        &ids,
        &choices,
        &limits,
        seed.or(SEED),
    )?;
    for (name, new) in names.iter().zip(&continuations) {
        step.print(format!("{name:<28} {:?}", decode(&m.tokenizer, new)?));
    }
    Ok(())
}

fn cached_or_recomputed(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let ids = encode(&m.tokenizer, PROMPT)?;
    let prompt = as_batch(&ids);
    let cached = generate_cached(
        &m.model,
        &prompt,
        CACHED_TOKENS,
        &m.recipe,
        TinyModel::forward,
    );
    // One pass over the whole sequence gives what recomputing gives at every step.
    let (all, _) = m.model.forward(
        &cached.ids.narrow(1, 0, ids.len() + CACHED_TOKENS - 1),
        &m.recipe,
    );
    let recomputed = all.select(0, 0).narrow(0, ids.len() - 1, CACHED_TOKENS);
    let same = cached
        .logits
        .argmax_dim(-1, false)
        .eq(&recomputed.argmax_dim(-1, false))
        .to_vec()
        .iter()
        .filter(|&&b| b)
        .count();
    // Its order of magnitude is what both compute; its digits depend on the order in which
    // each product adds its terms, not on attention: they go to stderr, beside the progress.
    let diff = (&cached.logits - &recomputed).abs().max().item() as f64;
    let order = diff.log10().floor() as i32;
    story
        .step("Cached decoding against recomputing")
        .print(format!(
            "{CACHED_TOKENS} tokens; the same token chosen at {same} of {CACHED_TOKENS} steps"
        ))
        .print(format!(
            "largest logit difference: between 1e{order} and 1e{}",
            order + 1
        ));
    eprintln!("    largest logit difference: {diff:.1e}");
    Ok(())
}

fn sinks(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let ids = encode(&m.tokenizer, SENTENCE)?;
    let (_, maps) = attention_maps(&m.model, &as_batch(&ids), &m.recipe);
    let step = story.step("Attention sinks");
    step.print(format!("{:?}: {} tokens", SENTENCE, ids.len()));
    // Query 0 sees only key 0: it has no choice to make, so it is left out of the mean.
    step.print(format!(
        "first token's share of each layer's attention (mean over heads, queries 1 to {}):",
        ids.len() - 1
    ));
    let shares: Vec<f64> = maps
        .iter()
        .map(|w| sink_share(w).iter().sum::<f64>() / w.size(1) as f64)
        .collect();
    for (row, chunk) in shares.chunks(10).enumerate() {
        let cells: Vec<String> = chunk.iter().map(|s| format!("{s:.2}")).collect();
        step.print(format!(
            "layers {:>2}-{:>2}: {}",
            row * 10,
            row * 10 + chunk.len() - 1,
            cells.join(" ")
        ));
    }
    let labels: Vec<String> = ids
        .iter()
        .map(|&i| decode(&m.tokenizer, &[i]).unwrap_or_default())
        .collect();
    let strongest = shares
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(l, _)| l);
    let head0 = maps[strongest].select(0, 0).select(0, 0);
    step.heatmap(
        &format!("layer {strongest}, head 0"),
        &head0,
        &labels,
        &labels,
    )?;
    Ok(())
}

fn speculative(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let ids = encode(&m.tokenizer, CODE_PROMPT)?;
    let prompt = as_batch(&ids);
    let run =
        speculate_lookup(&m.model, &prompt, SPECULATED_TOKENS, DRAFT_K, &m.recipe);
    let limits = Limits {
        max_new_tokens: SPECULATED_TOKENS,
        eos: None,
        context_length: m.config.context_length,
    };
    let greedy =
        generate(&m.model, &m.recipe, &ids, Choice::Greedy, &limits, |_| {})?;
    let new: Vec<u32> = run.ids.to_vec()[ids.len()..]
        .iter()
        .map(|&i| i as u32)
        .collect();
    story
        .step("Speculative decoding with prompt lookup")
        .print(format!("{CODE_PROMPT}{}", decode(&m.tokenizer, &new)?))
        .print(format!(
            "drafts of up to {DRAFT_K} tokens looked up in the sequence itself"
        ))
        .print(format!(
            "passes of the full model: {} for {SPECULATED_TOKENS} tokens",
            run.rounds.len()
        ))
        .print(format!(
            "acceptance rate: {:.2}, tokens per pass: {:.2}",
            run.acceptance_rate(),
            run.tokens_per_pass()
        ))
        .print(format!("same tokens as greedy decoding: {}", new == greedy));
    Ok(())
}

fn induction(story: &mut Narrative, m: &Loaded, seed: Seed) -> Result<()> {
    let ids = repeated_tokens(
        INDUCTION_BATCH,
        INDUCTION_HALF,
        m.bos.map_or(1, i64::from),
        seed.or(SEED),
    );
    let (heads, first, repeat) = scan(&m.model, &ids, INDUCTION_HALF, &m.recipe);
    let mut by_induction: Vec<&HeadScores> = heads.iter().collect();
    by_induction.sort_by(|a, b| b.induction.total_cmp(&a.induction));
    let mut by_previous: Vec<&HeadScores> = heads.iter().collect();
    by_previous.sort_by(|a, b| b.previous.total_cmp(&a.previous));
    let name = |h: &HeadScores, s: f64| format!("{}.{} ({s:.2})", h.layer, h.head);
    let strong = heads
        .iter()
        .filter(|h| h.induction > INDUCTION_THRESHOLD)
        .count();
    story
        .step("Induction heads, by chapter 19's scores")
        .print(format!(
            "{INDUCTION_BATCH} sequences of {INDUCTION_HALF} random tokens, each repeated once"
        ))
        .print(format!(
            "loss on the first half: {first:.2}, on the repeat: {repeat:.2}"
        ))
        .print(format!(
            "heads with an induction score above {INDUCTION_THRESHOLD}: {strong} of {}",
            heads.len()
        ))
        .print(format!(
            "strongest induction heads (layer.head): {}",
            by_induction
                .iter()
                .take(TOP_HEADS)
                .map(|h| name(h, h.induction))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .print(format!(
            "strongest previous-token heads: {}",
            by_previous
                .iter()
                .take(TOP_HEADS)
                .map(|h| name(h, h.previous))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    Ok(())
}

/// The interventions (`--interventions`) with the default options.
pub fn interventions(seed: Seed) -> Result<Narrative> {
    interventions_with(seed, &Options::default())
}

/// The interventions, on the model `options.model` names: heads ablated, then a window
/// without its sink.
pub fn interventions_with(seed: Seed, options: &Options) -> Result<Narrative> {
    let m = load_with_progress(options.model.as_ref())?;
    let _packed = pack_weights(&m.model);
    let mut story = Narrative::new("Chapter 20: interventions on a real model");
    progress("ablating heads");
    ablations(&mut story, &m, seed)?;
    progress("a window without its sink");
    streaming(&mut story, &m)?;
    Ok(story)
}

fn ablations(story: &mut Narrative, m: &Loaded, seed: Seed) -> Result<()> {
    let (half, bos) = (INDUCTION_HALF, m.bos.map_or(1, i64::from));
    let ids = repeated_tokens(INDUCTION_BATCH, half, bos, seed.or(SEED));
    let [previous, other_previous] = PREVIOUS_TOKEN_HEADS;
    let named = [INDUCTION_HEAD, previous, other_previous];
    let control = random_head(m.config.n_layers, m.config.n_heads, &named);
    let name = |(layer, head): (usize, usize)| format!("{layer}.{head}");
    let rows = [
        ("none".to_string(), vec![]),
        (
            format!("{} (induction)", name(INDUCTION_HEAD)),
            vec![INDUCTION_HEAD],
        ),
        (
            format!("{} (previous token)", name(previous)),
            vec![previous],
        ),
        (
            format!("{} (previous token)", name(other_previous)),
            vec![other_previous],
        ),
        (
            format!("{} and {}", name(INDUCTION_HEAD), name(previous)),
            vec![INDUCTION_HEAD, previous],
        ),
        (
            format!("{} (control, at random)", name(control)),
            vec![control],
        ),
    ];
    let (layer, head) = INDUCTION_HEAD;
    // The loss on the repeat, and the induction head's score, with `heads` ablated.
    let measure = |heads: &[(usize, usize)], replacement| {
        let ablation = Ablation {
            heads: heads.to_vec(),
            replacement,
        };
        let (logits, maps) =
            forward_with_ablation(&m.model, &ids, &m.recipe, &ablation);
        let score = mean_weight_at_offset(&maps[layer], half - 1, half)[head];
        format!(
            "{:.2} ({score:.2})",
            mean_loss(&logits, &ids, half..2 * half)
        )
    };
    let step = story.step("Ablating heads");
    step.print(format!(
        "{INDUCTION_BATCH} sequences of {half} random tokens, each repeated once"
    ))
    .print(format!(
        "loss on the repeat (and {}'s induction score) with heads ablated:",
        name(INDUCTION_HEAD)
    ))
    .print(format!(
        "{:<28} {:>13} {:>13}",
        "heads ablated", "zero", "mean"
    ));
    for (label, heads) in &rows {
        let zero = measure(heads, Replacement::Zero);
        // With no head ablated the two columns are the same run.
        let mean = if heads.is_empty() {
            zero.clone()
        } else {
            measure(heads, Replacement::Mean)
        };
        step.print(format!("{label:<28} {zero:>13} {mean:>13}"));
    }
    induction_head_heatmaps(step, m, seed)
}

/// The induction head's weights on a short repeat, before and after its previous-token
/// heads are switched off (its own ablation would not change them: only its output), for
/// `--heatmaps`.
fn induction_head_heatmaps(step: &mut Step, m: &Loaded, seed: Seed) -> Result<()> {
    let bos = m.bos.map_or(1, i64::from);
    let short = repeated_tokens(1, HEATMAP_HALF, bos, seed.or(SEED));
    let (layer, head) = INDUCTION_HEAD;
    for (title, heads) in [
        ("as trained", vec![]),
        (
            "previous-token heads zero-ablated",
            PREVIOUS_TOKEN_HEADS.to_vec(),
        ),
    ] {
        let ablation = Ablation {
            heads,
            replacement: Replacement::Zero,
        };
        let (_, maps) = forward_with_ablation(&m.model, &short, &m.recipe, &ablation);
        let weights = maps[layer].select(0, 0).select(0, head as i64);
        step.heatmap_indexed(&format!("head {layer}.{head}, {title}"), &weights)?;
    }
    Ok(())
}

fn streaming(story: &mut Narrative, m: &Loaded) -> Result<()> {
    let ids = encode(&m.tokenizer, PARAGRAPH)?;
    let n = ids.len();
    let batch = as_batch(&ids);
    let past = STREAMING_WINDOW..n - 1;
    let (logits, _) = m.model.forward(&batch, &m.recipe);
    let whole = mean_loss(&logits, &batch, 0..n - 1).exp();
    let full = mean_loss(&logits, &batch, past.clone()).exp();
    let layers = m.config.n_layers;
    let windowed = |sinks| {
        let recipe = streaming_recipe(&m.recipe, layers, STREAMING_WINDOW, sinks);
        perplexity(&m.model, &batch, &recipe, past.clone())
    };
    story
        .step("A window without its sink")
        .print(format!(
            "two paragraphs of this book (\"Why attention?\"): {n} tokens"
        ))
        .print(format!("perplexity over its {} predictions: {whole:.1}", n - 1))
        .print(format!(
            "the {} predictions past a window of {STREAMING_WINDOW} keys, every layer local:",
            past.len()
        ))
        .print(format!(
            "{:<40} {:>7.1}",
            "full attention", full
        ))
        .print(format!(
            "{:<40} {:>7.1}",
            "the window alone (first token evicted)",
            windowed(0)
        ))
        .print(format!(
            "{:<40} {:>7.1}",
            format!("the window and {STREAMING_SINKS} sink tokens"),
            windowed(STREAMING_SINKS)
        ));
    Ok(())
}
