//! Chapter 19: the four heads' attention weights at any saved step of the chapter's
//! training run.
//!
//! The chapter's saved run holds the model's parameters before training and at every
//! logged step. The widget loads the parameters of the step the reader picks into the
//! chapter's model and runs its forward pass over a sequence that ends with a repeat: the
//! chapter's example, or a fresh draw of the chapter's data from a seed. It shows the last
//! `2k` positions, the repeat and the segment it copies, as the chapter's figures do (so a
//! row holds the weight on those keys, not all of it), and the caption gives the scores the
//! chapter prints for that step.

use ch19_induction_heads::checkpoint::Checkpoint;
use ch19_induction_heads::data::{Repeats, TOKENS};
use ch19_induction_heads::model::{AttentionOnly, HEADS, LAYERS};
use ch19_induction_heads::runs::{EVAL, LOG_EVERY, SAVED_RUN, SEED, STEPS};
use ch19_induction_heads::scores::{Scores, attention_weights, scores};
use shared::{cat, manual_seed};

use super::{Heatmap, Settings};
use crate::controls::{Control, Input};

/// The sequence the chapter prints and draws.
const EXAMPLE: &str = "the chapter's example";
/// A sequence drawn after `manual_seed(seed)` by the chapter's data generator.
const DRAWN: &str = "drawn from the seed";

/// The training step, by the logged steps (the trained model at first), the sequence, and
/// the seed of a drawn sequence (the chapter's 7 at first).
pub(super) fn controls() -> Vec<Control> {
    let step = Control {
        knob: "step",
        label: "training step",
        input: Input::Range {
            min: 0.0,
            max: f64::from(STEPS),
            step: Some(f64::from(LOG_EVERY)),
            value: f64::from(STEPS),
        },
    };
    vec![
        step,
        Control::choice("input", "sequence", &[EXAMPLE, DRAWN], EXAMPLE),
        Control::seed_from(SEED),
    ]
}

/// The weights of layer 0's and layer 1's heads after `settings.step` steps (the last if
/// left out) over the last `2k` positions of the sequence, rows and columns labelled
/// `position: token`; `seed` draws the sequence when `settings.input` asks for a drawn one.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let run = Checkpoint::from_bytes(SAVED_RUN, &AttentionOnly::new(), LOG_EVERY)
        .map_err(|e| e.to_string())?;
    let step = settings.step.unwrap_or(STEPS);
    // The chapter's draws in its order: the model, the evaluation batch, the example.
    manual_seed(SEED);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    let example = Repeats::Variable.draw(1);
    run.load_step(step, &mut model).map_err(|e| e.to_string())?;
    let sequence = match settings.input.as_deref().unwrap_or(EXAMPLE) {
        EXAMPLE => example,
        DRAWN => {
            manual_seed(seed);
            Repeats::Variable.draw(1)
        }
        other => {
            return Err(format!(
                "the sequence is {EXAMPLE:?} or {DRAWN:?}, not {other:?}"
            ));
        }
    };
    // Before training the chapter computes the scores; after a logged step it logged them.
    let scores = match run.log.iter().find(|entry| entry.step == step) {
        Some(entry) => entry.scores,
        None => scores(&model, &eval, None),
    };

    let k = sequence.ks[0];
    let first = TOKENS - 2 * k;
    // [LAYERS · HEADS, 2k, 2k]: every head's rows and columns of the last 2k positions.
    let layers: Vec<_> = (0..LAYERS)
        .map(|layer| attention_weights(&model, &sequence.ids, layer).select(0, 0))
        .collect();
    let weights = cat(&layers, 0).slice(1, first..).slice(2, first..);
    let ids = sequence.ids.to_vec();
    let labels: Vec<String> = (first..TOKENS)
        .map(|p| format!("{p}: {}", ids[p]))
        .collect();
    let titles = (0..LAYERS)
        .flat_map(|layer| (0..HEADS).map(move |h| format!("layer {layer} head {h}")))
        .collect();
    Ok(Heatmap::of_heads(&weights, labels.clone(), labels)
        .caption(caption(step, k, &scores))
        .titles(titles))
}

/// The step's scores as the chapter prints them, and what the rows and columns are.
fn caption(step: u32, k: usize, s: &Scores) -> String {
    let when = match step {
        0 => "Before training".to_string(),
        _ => format!("After step {step}"),
    };
    format!(
        "{when}: repeated-token loss {:.4}; previous-token score (layer 0) {:.4} {:.4}; \
         induction score (layer 1) {:.4} {:.4} (on the chapter's {EVAL} evaluation \
         sequences). Rows and columns: the last {} positions; the last {k} tokens repeat \
         the {k} before them.",
        s.repeat_loss,
        s.previous[0],
        s.previous[1],
        s.induction[0],
        s.induction[1],
        2 * k
    )
}

#[cfg(test)]
mod tests {
    use super::super::heatmap;
    use super::super::tests::settings;
    use super::*;

    /// The settings of chapter 19 at `step`, with the chapter's example.
    fn at(step: u32) -> Settings {
        Settings {
            step: Some(step),
            ..settings(19)
        }
    }

    #[test]
    fn the_trained_weights_are_the_narratives() {
        let map = heatmap(&settings(19)).unwrap();
        assert_eq!(map, heatmap(&at(STEPS)).unwrap());
        // The chapter's example has k = 6: the last 12 positions, four heads.
        assert_eq!(map.heads.len(), LAYERS * HEADS);
        assert_eq!(map.queries.len(), 12);
        assert_eq!(map.queries[0], "20: 4");
        // The chapter prints "layer 1 head 0: 26->21 0.83": query 26, key 21.
        let (q, key) = (26 - 20, 21 - 20);
        assert_eq!(format!("{:.2}", map.heads[2][q][key]), "0.83");
        let caption = map.caption.unwrap();
        assert!(caption.starts_with("After step 3000: repeated-token loss 0.5225;"));
        assert!(caption.contains("(layer 0) 0.0863 0.6155"), "{caption}");
        assert!(caption.contains("(layer 1) 0.6263 0.0059"), "{caption}");
    }

    #[test]
    fn step_0_is_the_untrained_model_with_the_chapters_scores_before_training() {
        let caption = heatmap(&at(0)).unwrap().caption.unwrap();
        assert!(
            caption.starts_with(
                "Before training: repeated-token loss 3.5119; previous-token score \
                 (layer 0) 0.0979 0.1052; induction score (layer 1) 0.0370 0.0351"
            ),
            "{caption}"
        );
    }

    #[test]
    fn the_induction_head_sharpens_through_the_drop() {
        // Layer 1 head 0's weight on the token after the earlier occurrence, summed over
        // the repeat's queries, grows from the plateau to the end of the drop.
        let on_next = |step| {
            let map = heatmap(&at(step)).unwrap();
            let k = map.queries.len() / 2;
            (k..2 * k).map(|q| map.heads[2][q][q + 1 - k]).sum::<f32>()
        };
        assert!(on_next(1000) + 1.0 < on_next(2200));
    }

    #[test]
    fn a_drawn_sequence_follows_the_seed_and_bad_settings_get_a_message() {
        let drawn = |seed: &str| {
            heatmap(&Settings {
                input: Some(DRAWN.into()),
                seed: Some(seed.into()),
                ..settings(19)
            })
            .unwrap()
        };
        assert_ne!(drawn("1").queries, drawn("2").queries);
        assert_eq!(drawn("1"), drawn("1"));
        let error = heatmap(&at(150)).unwrap_err();
        assert!(error.contains("step 150"), "{error}");
        let error = heatmap(&Settings {
            input: Some("mine".into()),
            ..settings(19)
        })
        .unwrap_err();
        assert!(error.contains("\"mine\""), "{error}");
    }
}
