//! Chapter 10: the weights the gradients flow through.
//!
//! The chapter's forward passes keep on a tape what the backward pass needs, among it the
//! weights after dropout, `P'`, which multiplied the values: the gradient of every value
//! and every weight goes through them. The widget runs the chapter's forward pass with its
//! tape on the chapter's batch (the sentence twice, the first shown), after the chapter's
//! `manual_seed`, so dropout draws the chapter's noise: with one head, chapter 5's
//! `CausalAttention` (the chapter's first two runs), with more, chapter 7's
//! `MultiHeadAttention` (its last run).

use ch05_causal::CausalAttention;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::causal::causal_forward;
use ch10_backward::multihead::multihead_forward;
use shared::{manual_seed, stack};

use super::{
    ANY_HEADS, Heatmap, Settings, check_heads, dropout, embeddings, labels, sentence,
};
use crate::controls::Control;

/// The chapter's first run: `CausalAttention` with `d_out = 2`, one head.
const D_OUT: usize = 2;
const HEADS: usize = 1;

/// The sentence, the width and the heads, dropout (whose noise the tape keeps) and the
/// seed. The chapter's modules are causal and divide by `√d_k`: no mask to switch off, no
/// temperature.
pub(super) fn controls() -> Vec<Control> {
    vec![
        Control::sentence("sentence"),
        Control::width("d_out", D_OUT),
        Control::heads("heads", "heads", &ANY_HEADS, HEADS),
        Control::dropout(),
        Control::seed(),
    ]
}

/// The weights after dropout of the batch's first sentence, one matrix per head.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let words = sentence(settings.words.as_deref())?;
    let heads = settings.heads.unwrap_or(HEADS);
    let d_out = settings.d_out.unwrap_or(D_OUT);
    check_heads("d_out", heads, d_out)?;
    let p = settings.dropout.unwrap_or(0.0);
    dropout(p)?; // a message, rather than a panic in the module, for a p out of range
    let x = embeddings(&words);
    let batch = stack(&[&x, &x], 0); // [2, tokens, 3], as the chapter's
    let (d_in, tokens) = (batch.size(2), batch.size(1));

    manual_seed(seed);
    let (weights, module) = if heads == 1 {
        let ca = CausalAttention::new(d_in, d_out, tokens, p, false);
        let (_, tape) = causal_forward(&ca, &batch);
        (
            tape.attention.dropped.get(0).unsqueeze(0),
            "CausalAttention's",
        )
    } else {
        let mha = MultiHeadAttention::new(d_in, d_out, tokens, p, heads, false);
        let (_, tape) = multihead_forward(&mha, &batch);
        (tape.attention.dropped.get(0), "MultiHeadAttention's")
    };
    let caption = format!(
        "{module} weights after dropout, as its forward pass keeps them for the backward: \
         the gradients flow through them"
    );
    Ok(Heatmap::of_heads(&weights, labels(&words), labels(&words)).caption(caption))
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};
    use course::Seed;

    /// The heatmaps the chapter records (what `--heatmaps` shows and the book draws),
    /// grouped per run: each run's heads, each a `[tokens, tokens]` matrix.
    fn recorded() -> Vec<Vec<Vec<Vec<f32>>>> {
        let story = ch10_backward::narrative::narrative(Seed::from(None)).unwrap();
        let mut runs = Vec::new();
        for step in story.steps.iter().filter(|s| !s.heatmaps.is_empty()) {
            let heads = step
                .heatmaps
                .iter()
                .map(|map| {
                    assert_eq!(map.rows, ch01_embeddings::inputs::YOUR_JOURNEY_WORDS);
                    map.values
                        .chunks(map.cols.len())
                        .map(<[f32]>::to_vec)
                        .collect()
                })
                .collect();
            runs.push(heads);
        }
        runs
    }

    #[test]
    fn the_weights_are_those_the_chapter_records() {
        let runs = recorded();
        assert_eq!(runs.len(), 3, "the chapter's three runs");
        // CausalAttention without and with dropout, then two heads of MultiHeadAttention.
        let widgets = [
            settings(10),
            Settings {
                dropout: Some(0.5),
                ..settings(10)
            },
            Settings {
                heads: Some(2),
                d_out: Some(4),
                ..settings(10)
            },
        ];
        for (run, widget) in runs.iter().zip(&widgets) {
            assert_eq!(&heatmap(widget).unwrap().heads, run, "{widget:?}");
        }
    }

    #[test]
    fn dropout_zeroes_weights_and_scales_the_rest() {
        let map = heatmap(&Settings {
            dropout: Some(0.5),
            ..settings(10)
        })
        .unwrap();
        let plain = heatmap(&settings(10)).unwrap();
        let pairs = map.heads[0]
            .iter()
            .flatten()
            .zip(plain.heads[0].iter().flatten());
        for (dropped, weight) in pairs {
            assert!(*dropped == 0.0 || *dropped == 2.0 * weight);
        }
    }
}
