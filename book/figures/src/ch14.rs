//! Chapter 14's figures: which keys a sliding window leaves visible, which key/value head
//! each query head reads, and the attention row of every new token as the cache grows.

use ch14_generation::generate::generate_cached;
use ch14_generation::gqa::repeat_kv;
use ch14_generation::setup::{CONFIG, N_NEW, PROMPT, WINDOW};
use ch14_generation::window::sliding_window_mask;
use ch14_generation::{DecoderConfig, TinyDecoder};
use shared::{Tensor, eye, manual_seed, zeros};

use crate::{Figure, Panel};

/// The figures of chapter 14, in the order of the page.
pub fn figures() -> Vec<Figure> {
    vec![
        sliding_window(),
        gqa_heads(),
        generation_steps(),
        window_steps(),
    ]
}

/// `0`, `1`, ...: token positions.
fn positions(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// Sliding window: which keys 8 queries see, causal and with a window of 4, drawn as the
/// weights equal scores get (the visible keys of a row share its weight equally).
fn sliding_window() -> Figure {
    let equal_scores = |window| {
        let mut scores = zeros(&[8, 8]);
        scores.masked_fill_(&sliding_window_mask(8, window), f32::NEG_INFINITY);
        scores.softmax(-1)
    };
    let labels = positions(8);
    Figure {
        name: "ch14-sliding-window",
        title: "Keys each query sees, with equal scores: causal, and a window of 4",
        panels: vec![
            Panel::new("causal: j <= i", &labels, &labels, &equal_scores(None)),
            Panel::new(
                "window of 4: i - 4 < j <= i",
                &labels,
                &labels,
                &equal_scores(Some(WINDOW)),
            ),
        ],
        panels_per_row: 2,
    }
}

/// Grouped-query attention: which key/value head (column) each of 4 query heads (row)
/// reads, for 4, 2 and 1 key/value heads, computed by `repeat_kv` itself.
fn gqa_heads() -> Figure {
    let query_heads: Vec<String> = (0..4).map(|h| format!("q{h}")).collect();
    let panels = [(4, "multi-head"), (2, "grouped-query"), (1, "multi-query")]
        .into_iter()
        .map(|(n_kv, name)| {
            // Kv head g is the one-hot row g; repeat_kv puts it under its query heads.
            let one_hot = eye(n_kv).view(&[1, n_kv as i64, 1, n_kv as i64]);
            let reads = repeat_kv(&one_hot, 4 / n_kv).view(&[4, n_kv as i64]);
            let kv_heads: Vec<String> = (0..n_kv).map(|g| format!("kv{g}")).collect();
            Panel::new(
                &format!("{name}: {n_kv} kv head(s)"),
                &query_heads,
                &kv_heads,
                &reads,
            )
        })
        .collect();
    Figure {
        name: "ch14-gqa-heads",
        title: "The key/value head each query head reads (1)",
        panels,
        panels_per_row: 3,
    }
}

/// The attention weights of every decoding step after the prefill, one panel per head:
/// row = the new token's position, column = the cached key's position (0 where the
/// key is not in the cache).
fn step_panels(model: &TinyDecoder) -> Vec<Panel> {
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    let generation = generate_cached(model, &prompt, N_NEW, TinyDecoder::forward);
    let ids = generation.ids.to_vec();
    let label = |p: usize| format!("{p}: {}", ids[p]);
    let first = PROMPT.len();
    let rows: Vec<String> = (first..first + generation.weights.len())
        .map(label)
        .collect();
    let cols: Vec<String> =
        (0..first + generation.weights.len()).map(label).collect();
    (0..model.attn.n_heads)
        .map(|h| {
            Panel::new(
                &format!("head {h}"),
                &rows,
                &cols,
                &generation.weight_rows(h),
            )
        })
        .collect()
}

/// Generation with the cache: each new token's attention row over the cached tokens.
fn generation_steps() -> Figure {
    manual_seed(123);
    let model = TinyDecoder::new(CONFIG);
    Figure {
        name: "ch14-generation-steps",
        title: "Each new token's weights over the cache (position: token id)",
        panels: step_panels(&model),
        panels_per_row: 2,
    }
}

/// The same with a window of 4: the cache holds the last 4 tokens only.
fn window_steps() -> Figure {
    manual_seed(123);
    let model = TinyDecoder::new(DecoderConfig {
        window: Some(WINDOW),
        ..CONFIG
    });
    Figure {
        name: "ch14-window-steps",
        title: "With a window of 4: the cache drops the oldest token at every step",
        panels: step_panels(&model),
        panels_per_row: 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_of_weights_sums_to_one_and_the_window_holds_four() {
        for figure in [generation_steps(), window_steps()] {
            for panel in &figure.panels {
                for r in 0..panel.rows.len() {
                    let row: Vec<f32> =
                        (0..panel.cols.len()).map(|c| panel.value(r, c)).collect();
                    assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                    if figure.name == "ch14-window-steps" {
                        assert!(row.iter().filter(|&&w| w > 0.0).count() <= WINDOW);
                    }
                }
            }
        }
    }
}
