//! Chapter 19's figures, from the saved run the chapter prints from (its checkpoint): the
//! loss at every step with the repeated-token loss beside it, the heads' scores as they
//! were logged, and where every head looks in the shown sequence's repeat before and after
//! training.

use ch19_induction_heads::checkpoint::Checkpoint;
use ch19_induction_heads::data::{Batch, Repeats, TOKENS};
use ch19_induction_heads::model::{AttentionOnly, HEADS, LAYERS};
use ch19_induction_heads::runs::{EVAL, LOG_EVERY, SAVED_RUN, SEED};
use ch19_induction_heads::scores::attention_weights;
use shared::manual_seed;

use crate::line_chart::{Curve, LineChart};
use crate::{Figure, Panel};

/// The saved run of the chapter's seed.
fn saved_run() -> Checkpoint {
    Checkpoint::from_bytes(SAVED_RUN, &AttentionOnly::new(), LOG_EVERY)
        .expect("the chapter's saved run reads")
}

/// The untrained model and the shown sequence, drawn as the chapter draws them.
fn untrained_and_shown() -> (AttentionOnly, Batch) {
    manual_seed(SEED);
    let model = AttentionOnly::new();
    let _eval = Repeats::Variable.draw(EVAL);
    (model, Repeats::Variable.draw(1))
}

/// Every head's weights over the shown sequence's last `2k` positions (the segment and its
/// repeat), one panel per head, layer by layer.
fn heads_over_the_repeat(model: &AttentionOnly, shown: &Batch) -> Vec<Panel> {
    let first = TOKENS - 2 * shown.ks[0];
    let ids = shown.ids.to_vec();
    let labels: Vec<String> =
        (first..TOKENS).map(|i| format!("{i}:{}", ids[i])).collect();
    let mut panels = Vec::new();
    for layer in 0..LAYERS {
        let weights = attention_weights(model, &shown.ids, layer);
        for h in 0..HEADS {
            let head = weights
                .select(0, 0)
                .select(0, h as i64)
                .slice(0, first..)
                .slice(1, first..);
            panels.push(Panel::new(
                &format!("layer {layer} head {h}"),
                &labels,
                &labels,
                &head,
            ));
        }
    }
    panels
}

/// Where the heads look before training: spread out, a little more on the first keys.
pub fn heads_before() -> Figure {
    let (model, shown) = untrained_and_shown();
    Figure {
        name: "ch19-heads-before",
        title: "Before training: the repeat's positions (position:token), every head",
        panels: heads_over_the_repeat(&model, &shown),
        panels_per_row: HEADS,
    }
}

/// Where the heads look after training: a previous-token head in layer 0, an induction
/// head in layer 1.
pub fn heads_after() -> Figure {
    let (mut model, shown) = untrained_and_shown();
    saved_run().load_into(&mut model);
    Figure {
        name: "ch19-heads-after",
        title: "After 3000 steps: the repeat's positions (position:token), every head",
        panels: heads_over_the_repeat(&model, &shown),
        panels_per_row: HEADS,
    }
}

/// The training loss at every step, and the repeated-token loss on the evaluation batch
/// every [`LOG_EVERY`] steps.
pub fn loss_curve() -> LineChart {
    let run = saved_run();
    LineChart {
        name: "ch19-loss",
        title: "The loss: a plateau, then a sudden drop",
        y_label: "loss",
        curves: vec![
            Curve {
                label: "training loss",
                every: 1,
                values: run.losses,
            },
            Curve {
                label: "repeated-token loss",
                every: LOG_EVERY as usize,
                values: run
                    .log
                    .iter()
                    .map(|e| e.scores.repeat_loss as f32)
                    .collect(),
            },
        ],
        x_tick: 500,
        y_tick: 0.5,
    }
}

/// The previous-token scores of layer 0's heads and the induction scores of layer 1's, as
/// logged every [`LOG_EVERY`] steps.
pub fn score_curves() -> LineChart {
    let log = saved_run().log;
    let curve =
        |label, score: fn(&ch19_induction_heads::scores::Scores) -> f64| Curve {
            label,
            every: LOG_EVERY as usize,
            values: log.iter().map(|e| score(&e.scores) as f32).collect(),
        };
    LineChart {
        name: "ch19-scores",
        title: "A previous-token head and an induction head form together",
        y_label: "mean weight",
        curves: vec![
            curve("previous-token, layer 0 head 0", |s| s.previous[0]),
            curve("previous-token, layer 0 head 1", |s| s.previous[1]),
            curve("induction, layer 1 head 0", |s| s.induction[0]),
            curve("induction, layer 1 head 1", |s| s.induction[1]),
        ],
        x_tick: 500,
        y_tick: 0.2,
    }
}
