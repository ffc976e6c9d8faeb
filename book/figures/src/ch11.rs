//! Chapter 11's figures: the shown sequence's attention before and after training, and the
//! loss curve, from the chapter's own training run (seed 123, the default steps).

use ch11_training::model::HEADS;
use ch11_training::run::{DEFAULT_STEPS, TrainingRun, training_run};

use crate::line_chart::LineChart;
use crate::{Figure, Panel};

/// The chapter's run, as `cargo run -p ch11-training` trains it.
fn chapter_run() -> TrainingRun {
    training_run(123, DEFAULT_STEPS, |_, _| {})
}

/// Both heads before training (top) and after (bottom), the positions labelled with the
/// shown sequence's tokens.
pub fn attention_before_after() -> Figure {
    let run = chapter_run();
    let labels: Vec<String> = run
        .shown
        .to_vec()
        .iter()
        .enumerate()
        .map(|(i, token)| format!("{i}:{token}"))
        .collect();
    let mut panels = Vec::new();
    for (when, weights) in [("before", &run.before), ("after", &run.after)] {
        for h in 0..HEADS {
            let head = weights.select(0, 0).select(0, h as i64);
            panels.push(Panel::new(
                &format!("head {h}, {when} training"),
                &labels,
                &labels,
                &head,
            ));
        }
    }
    Figure {
        name: "ch11-attention-before-after",
        title: "Attention learns to look two places back (position:token)",
        panels,
        panels_per_row: HEADS,
    }
}

/// The loss at every step of the chapter's run.
pub fn loss_curve() -> LineChart {
    LineChart::one_curve(
        "ch11-loss",
        "Cross-entropy loss during training",
        "loss",
        chapter_run().losses,
    )
}
