//! Chapter 13's figure: the three uses of attention in the original Transformer, each with
//! its mask, on the padded sequence of the chapter's batch.

use ch13_block::masked_attention::attention_weights;
use ch13_block::masks::{decoder_mask, hide_padded_keys, padding_mask};
use shared::{Tensor, manual_seed, randn};

use crate::{Figure, Panel};

/// `["src 1", "src 2", "pad", "pad"]`: the tokens of a sequence of `len` real tokens padded
/// to `tokens`.
fn padded_labels(prefix: &str, len: usize, tokens: usize) -> Vec<String> {
    (1..=tokens)
        .map(|j| {
            if j <= len {
                format!("{prefix} {j}")
            } else {
                "pad".to_string()
            }
        })
        .collect()
}

/// The chapter's padded batch (`manual_seed(123)`, encoder 4 tokens, decoder 3; the second
/// sequence has 2 real tokens in each) and its three attentions, one head, no projections;
/// the panels show the second sequence, whose masks hide something in every panel.
pub(crate) fn three_attentions() -> Figure {
    manual_seed(123);
    let src = randn(&[2, 4, 4]).unsqueeze(1); // [b, 1, 4, d]
    let tgt = randn(&[2, 3, 4]).unsqueeze(1); // [b, 1, 3, d]
    let src_pad = padding_mask(&Tensor::from_vec(vec![4i64, 2], &[2]), 4);
    let tgt_pad = padding_mask(&Tensor::from_vec(vec![3i64, 2], &[2]), 3);
    let inf = f32::NEG_INFINITY;
    let encoder = attention_weights(&src, &src, &hide_padded_keys(&src_pad), inf);
    let decoder = attention_weights(&tgt, &tgt, &decoder_mask(&tgt_pad), inf);
    let cross = attention_weights(&tgt, &src, &hide_padded_keys(&src_pad), inf);
    let second = |w: &Tensor| w.get(1).get(0);
    let (src_tokens, tgt_tokens) =
        (padded_labels("src", 2, 4), padded_labels("tgt", 2, 3));
    Figure {
        name: "ch13-three-attentions",
        title: "The Transformer's three attentions on a padded sequence: hidden keys get weight 0",
        panels: vec![
            Panel::new(
                "encoder: padding",
                &src_tokens,
                &src_tokens,
                &second(&encoder),
            ),
            Panel::new(
                "decoder: causal | padding",
                &tgt_tokens,
                &tgt_tokens,
                &second(&decoder),
            ),
            Panel::new(
                "cross: encoder padding",
                &tgt_tokens,
                &src_tokens,
                &second(&cross),
            ),
        ],
        panels_per_row: 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figure_shows_the_printed_weights() {
        // Chapter 13 prints the second sequence's cross-attention row 0: [0.2942, 0.7058, 0, 0].
        let fig = three_attentions();
        let row: Vec<String> = (0..4)
            .map(|j| format!("{:.4}", fig.panels[2].value(0, j)))
            .collect();
        assert_eq!(row, ["0.2942", "0.7058", "0.0000", "0.0000"]);
        // The decoder's padded key (column 2) is hidden from every query.
        assert!((0..3).all(|i| fig.panels[1].value(i, 2) == 0.0));
    }
}
