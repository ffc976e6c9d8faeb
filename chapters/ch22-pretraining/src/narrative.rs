//! The chapter's printed steps, in the order of the reference script
//! `reference/ch22_pretraining.py`.

use ch19_induction_heads::pytorch_order::PytorchOrder;
use course::{Narrative, Seed, Step};
use shared::rng::Generator;
use shared::{Result, manual_seed};

use crate::baselines::{letter_pairs, letters, uniform};
use crate::bpe::Bpe;
use crate::card::{Part, parameters_by_part};
use crate::chars::Chars;
use crate::config::{Arch, Config};
use crate::data::Shakespeare;
use crate::model::Model;
use crate::runs::{EvalBatches, Plan};
use crate::sample::sample;
use crate::setup::{
    BPE_VOCAB, MERGES_SHOWN, PROMPT, SAMPLE, SAMPLE_CHARS, SAMPLE_SEED, SEED,
    SHORT_BATCH, SHORT_SAMPLE_CHARS, SHORT_STEPS, SOURCE, TRAINED_LLAMA,
    TRAINED_STEPS,
};
use crate::train::{evaluate, train};
use crate::weights::load_safetensors;

/// Runs the chapter and returns what it prints. Without the text it prints nothing
/// and fails with how to get it.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let data = Shakespeare::load()?;
    let (train, validation) = data.split();
    let chars = Chars::new(&data.text);
    let mut story = Narrative::new("Chapter 22: Pretraining on Shakespeare");
    the_data(
        story.step("The data: Shakespeare's plays and poems"),
        &data,
        &chars,
    );
    baselines(
        story.step("What a model must beat: the validation loss without one"),
        &chars.encode(train)?,
        &chars.encode(validation)?,
        chars.vocab_size(),
    );
    let bpe = Bpe::train(train, BPE_VOCAB)?;
    two_tokenizers(
        story.step("Two tokenizers: characters and byte-pair encoding"),
        &chars,
        &bpe,
        validation,
    )?;
    let train = chars.encode(train)?;
    let validation = chars.encode(validation)?;
    let config = Config::baby(chars.vocab_size());
    model_card(
        story.step("Two models of the same size: the parameters by part"),
        &config,
    )?;
    short_run(
        story.step("A short run of each, its losses PyTorch's"),
        seed,
        &train,
        &chars,
    )?;
    trained(
        story.step(format!(
            "The trained model: Llama after {TRAINED_STEPS} steps"
        )),
        seed,
        &train,
        &validation,
        &chars,
    )?;
    Ok(story)
}

/// The text: where it comes from, its size and characters, the split.
fn the_data(step: &mut Step, data: &Shakespeare, chars: &Chars) {
    let (train, validation) = data.split();
    let letters = chars
        .chars
        .iter()
        .filter(|c| c.is_ascii_alphabetic())
        .count();
    let others: String = chars
        .chars
        .iter()
        .filter(|c| !c.is_ascii_alphabetic())
        .collect();
    let beginning: String = validation.chars().take(40).collect();
    step.print(SOURCE)
        .print(format!("characters: {}", data.text.chars().count()))
        .print(format!(
            "distinct characters: {}, the {letters} letters and {others:?}",
            chars.vocab_size()
        ))
        .print(format!(
            "training text: {} characters (the first 90%)",
            train.chars().count()
        ))
        .print(format!(
            "validation text: {} characters, from {beginning:?}",
            validation.chars().count()
        ));
}

/// The three baselines on the validation text, with the training text's counts.
fn baselines(step: &mut Step, train: &[u32], validation: &[u32], vocab: usize) {
    step.print(format!(
        "guessing every character alike: {:.4} (ln {vocab})",
        uniform(vocab)
    ))
    .print(format!(
        "letter frequencies, add-one smoothed: {:.4}",
        letters(train, validation, vocab)
    ))
    .print(format!(
        "letter pairs, add-one smoothed: {:.4}",
        letter_pairs(train, validation, vocab)
    ));
}

/// The two tokenizers side by side: their vocabularies, the first merges, a line
/// encoded both ways, and how many tokens each needs for the validation text.
fn two_tokenizers(
    step: &mut Step,
    chars: &Chars,
    bpe: &Bpe,
    validation: &str,
) -> Result<()> {
    step.print(format!("characters: {} tokens", chars.vocab_size()))
        .print(format!(
            "byte-pair encoding: {} tokens, {} characters and {} merges",
            bpe.vocab_size(),
            bpe.alphabet.vocab_size(),
            bpe.merges.len()
        ));
    for (rank, &(a, b)) in bpe.merges.iter().take(MERGES_SHOWN).enumerate() {
        let new_id = (bpe.alphabet.vocab_size() + rank) as u32;
        step.print(format!(
            "merge {}: {:?} + {:?} -> {:?}",
            rank + 1,
            bpe.token(a)?,
            bpe.token(b)?,
            bpe.token(new_id)?
        ));
    }
    let by_chars = chars.encode(SAMPLE)?;
    let by_pairs = bpe.encode(SAMPLE)?;
    let pieces = by_pairs
        .iter()
        .map(|&id| Ok(format!("{:?}", bpe.token(id)?)))
        .collect::<Result<Vec<_>>>()?;
    step.print(format!("{SAMPLE:?}"));
    step.print(format!("characters, {} tokens:", by_chars.len()));
    print_ids(step, &by_chars);
    step.print(format!("byte-pair encoding, {} tokens:", by_pairs.len()));
    print_ids(step, &by_pairs);
    step.print(pieces.join(" "));
    let n = validation.chars().count();
    step.print("tokens per character of the validation text:");
    for (name, tokens) in [
        ("characters", chars.encode(validation)?.len()),
        ("byte-pair encoding", bpe.encode(validation)?.len()),
    ] {
        step.print(format!(
            "{name}: {:.4} ({tokens} tokens)",
            tokens as f64 / n as f64
        ));
    }
    Ok(())
}

/// Token ids, 20 to a line.
fn print_ids(step: &mut Step, ids: &[u32]) {
    for row in ids.chunks(20) {
        let row: Vec<String> = row.iter().map(u32::to_string).collect();
        step.print(row.join(" "));
    }
}

/// The two models' parameters by part, side by side.
fn model_card(step: &mut Step, config: &Config) -> Result<()> {
    let gpt2 = parameters_by_part(&Model::new(Arch::Gpt2, config)?);
    let llama = parameters_by_part(&Model::new(Arch::Llama, config)?);
    step.print(format!(
        "{} layers, {} heads, width {}, context {}, {} tokens",
        config.n_layers,
        config.n_heads,
        config.d_model,
        config.context,
        config.vocab_size
    ))
    .print(format!("{:<10} {:>8} {:>8}", "", "gpt2", "llama"));
    for (i, part) in Part::ALL.iter().enumerate() {
        step.print(format!(
            "{:<10} {:>8} {:>8}",
            part.to_string(),
            gpt2[i],
            llama[i]
        ));
    }
    let total = |counts: [usize; 4]| counts.iter().sum::<usize>();
    step.print(format!(
        "{:<10} {:>8} {:>8}",
        "total",
        total(gpt2),
        total(llama)
    ));
    Ok(())
}

/// Each model trained for [`SHORT_STEPS`] steps of [`SHORT_BATCH`] sequences from
/// `manual_seed(seed)`, its losses ten to a line, and a sample of the Llama model after
/// them.
fn short_run(
    step: &mut Step,
    seed: Seed,
    train_ids: &[u32],
    chars: &Chars,
) -> Result<()> {
    let plan = Plan::short(chars.vocab_size(), SHORT_STEPS, SHORT_BATCH);
    for arch in [Arch::Gpt2, Arch::Llama] {
        manual_seed(seed.or(SEED));
        let mut model = Model::new(arch, &plan.config)?;
        let losses = train::<PytorchOrder>(
            &mut model,
            train_ids,
            &plan.config,
            &plan.settings,
            plan.steps,
            |_, _| {},
        )?;
        step.print(format!(
            "{arch}, {} steps of {} sequences:",
            plan.steps, plan.config.batch
        ));
        for row in losses.chunks(10) {
            let row: Vec<String> = row.iter().map(|l| format!("{l:.4}")).collect();
            step.print(row.join(" "));
        }
        if arch == Arch::Llama {
            let prompt = chars.encode(PROMPT)?;
            let mut sampler = Generator::new(seed.or(SAMPLE_SEED));
            let text = chars.decode(&sample(
                &model,
                &prompt,
                SHORT_SAMPLE_CHARS,
                &mut sampler,
            )?)?;
            step.print(format!("a sample of llama after {} steps:", plan.steps))
                .print(text);
        }
    }
    Ok(())
}

/// The committed trained Llama: its loss on the fixed validation batches, and a sample.
fn trained(
    step: &mut Step,
    seed: Seed,
    train_ids: &[u32],
    validation: &[u32],
    chars: &Chars,
) -> Result<()> {
    let config = Config::baby(chars.vocab_size());
    let mut model = Model::new(Arch::Llama, &config)?;
    load_safetensors(&mut model, TRAINED_LLAMA)?;
    let batches = EvalBatches::new(train_ids, validation, &config)?;
    step.print(format!(
        "loss on {} fixed batches of the validation text: {:.4}",
        batches.val.len(),
        evaluate::<PytorchOrder>(&model, &batches.val)
    ));
    let prompt = chars.encode(PROMPT)?;
    let mut sampler = Generator::new(seed.or(SAMPLE_SEED));
    let text = chars.decode(&sample(&model, &prompt, SAMPLE_CHARS, &mut sampler)?)?;
    step.print("a sample:").print(text);
    Ok(())
}
