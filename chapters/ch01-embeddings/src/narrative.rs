//! The chapter's printed steps, in the order of the reference script
//! `reference/ch01_embeddings.py`.

use course::narrative::python_dict;
use course::{Narrative, Seed};
use shared::nn::Embedding;
use shared::{Result, manual_seed};

use crate::inputs::{LIFE_IS_SHORT, my_name_ids, your_journey};
use crate::lookup::lookup;
use crate::vocabulary::{token_ids, vocabulary};

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seeds.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 1: Embeddings");

    // ANCHOR: your_journey_print
    let inputs = your_journey();
    story
        .step("\"Your journey starts with one step\" as six 3-d vectors")
        .print(&inputs)
        .print(inputs.shape());
    // ANCHOR_END: your_journey_print

    // ANCHOR: life_is_short
    let vocab = vocabulary(LIFE_IS_SHORT);
    story
        .step("Vocabulary of \"Life is short, eat dessert first\"")
        .print(python_dict(&vocab));
    let sentence_int = token_ids(LIFE_IS_SHORT, &vocab);
    story.step("Token ids").print(&sentence_int);

    manual_seed(seed.or(123));
    let embed = Embedding::new(6, 16);
    let embedded_sentence = lookup(&embed.weight, &sentence_int);
    story
        .step(format!(
            "Embedding(6, 16) after manual_seed({})",
            seed.or(123)
        ))
        .print(&embedded_sentence)
        .print(embedded_sentence.shape());
    // ANCHOR_END: life_is_short

    // ANCHOR: my_name
    let tokenized_sentence = my_name_ids();
    story
        .step("Token ids of \"my name is marcello politi\"")
        .print(&tokenized_sentence);
    manual_seed(seed.or(0));
    let embed = Embedding::new(10, 16);
    let sentence_embed = lookup(&embed.weight, &tokenized_sentence);
    story
        .step(format!(
            "Embedding(10, 16) after manual_seed({})",
            seed.or(0)
        ))
        .print(&sentence_embed)
        .print(sentence_embed.shape());
    // ANCHOR_END: my_name

    Ok(story)
}
