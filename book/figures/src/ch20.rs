//! Chapter 20's figures: a trained model's attention, from the weights the reference
//! script saved with transformers (`chapters/ch20-real-model/fixtures/real/`), so the
//! figures need neither the model file nor its tokenizer.

use ch20_real_model::reference::{SavedAttention, saved_attention};
use ch20_real_model::setup::SENTENCE;

use crate::{Figure, Panel};

fn saved() -> SavedAttention {
    saved_attention().expect("chapter 20's saved attention weights read")
}

/// The sentence's tokens, as the model's tokenizer cuts it: one per word, the comma and
/// the full stop on their own (the saved ids say how many there must be).
fn sentence_tokens(count: usize) -> Vec<String> {
    let tokens: Vec<String> = SENTENCE
        .split_whitespace()
        .flat_map(|word| match word.strip_suffix([',', '.']) {
            Some(stem) => vec![stem.to_string(), word[stem.len()..].to_string()],
            None => vec![word.to_string()],
        })
        .collect();
    assert_eq!(tokens.len(), count, "the sentence's tokens: {tokens:?}");
    tokens
}

/// The first three heads of the saved layer (5) on the sentence: the first rests on the
/// first token, the second shares it with the first "the", the third looks mostly at each
/// query's own token.
pub fn sink() -> Figure {
    let saved = saved();
    let tokens = sentence_tokens(saved.sentence_ids.len());
    Figure {
        name: "ch20-sink",
        title: "SmolLM2-135M-Instruct, three heads of one layer: the first token is the sink",
        panels: (0..3)
            .map(|h| {
                Panel::new(
                    &format!("layer {} head {h}", saved.sink_layer),
                    &tokens,
                    &tokens,
                    &saved.sentence_layer.select(0, h),
                )
            })
            .collect(),
        panels_per_row: 3,
    }
}

/// The strongest induction head on twelve random tokens repeated once: each query of the
/// repeat looks at the token after its earlier occurrence.
pub fn induction() -> Figure {
    let saved = saved();
    // The queries with their tokens, so that the repeat can be read off the rows; the keys
    // by position only, to keep the columns narrow.
    let queries: Vec<String> = saved
        .repeat_ids
        .iter()
        .enumerate()
        .map(|(i, id)| format!("{i}:{id}"))
        .collect();
    let keys: Vec<String> =
        (0..saved.repeat_ids.len()).map(|i| i.to_string()).collect();
    Figure {
        name: "ch20-induction-head",
        title: "SmolLM2-135M-Instruct, its strongest induction head on a repeat",
        panels: vec![Panel::new(
            &format!(
                "head {} (layer.head); rows position:token, columns position",
                saved.induction_head_name
            ),
            &queries,
            &keys,
            &saved.induction_head,
        )],
        panels_per_row: 1,
    }
}
