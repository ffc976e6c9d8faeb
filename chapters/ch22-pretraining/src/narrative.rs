//! The chapter's printed steps, in the order of the reference script
//! `reference/ch22_pretraining.py`.

use course::{Narrative, Seed, Step};
use shared::Result;

use crate::baselines::{letter_pairs, letters, uniform};
use crate::bpe::Bpe;
use crate::chars::Chars;
use crate::data::Shakespeare;
use crate::setup::{BPE_VOCAB, MERGES_SHOWN, SAMPLE, SOURCE};

/// Runs the chapter and returns what it prints. Without the text it prints nothing
/// and fails with how to get it.
pub fn narrative(_seed: Seed) -> Result<Narrative> {
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
    // The two models' steps follow here (the other modules of the crate): their card
    // with the parameters counted by part, a short run beside PyTorch's losses (drawn
    // with `manual_seed(seed.or(...))`), and a sample.
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
