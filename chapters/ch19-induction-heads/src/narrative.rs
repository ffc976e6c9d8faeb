//! The chapter's printed steps, in the order of the reference script
//! `reference/ch19_induction_heads.py`.

use course::{Narrative, Seed, Step};
use shared::{Result, manual_seed};

use crate::circuits::{copies, looks_one_back, strongest_keys};
use crate::data::{Repeats, TOKENS, VOCAB};
use crate::model::{AttentionOnly, HEADS, LAYERS};
use crate::scores::{Scores, attention_weights, scores};
use crate::train::train;

/// The training steps of the run with repeats of varying length.
pub const STEPS: u32 = 2000;
/// The training steps of the fixed-offset run.
pub const FIXED_STEPS: u32 = 300;
/// Sequences in the evaluation batch.
pub const EVAL: usize = 256;
/// The scores are logged every this many steps.
pub const LOG_EVERY: u32 = 100;

const HEADER: &str = " step    loss  repeat   prev h0 prev h1   ind h0  ind h1";

/// One logged line: the step, its training loss and the scores on the evaluation batch.
fn log_line(step: u32, loss: f32, s: &Scores) -> String {
    format!(
        "{step:5}  {loss:.4}  {:.4}   {:.4} {:.4}   {:.4} {:.4}",
        s.repeat_loss, s.previous[0], s.previous[1], s.induction[0], s.induction[1]
    )
}

/// Trains `steps` steps of `repeats` and returns the log lines.
fn logged_training(
    model: &mut AttentionOnly,
    repeats: Repeats,
    steps: u32,
    eval: &crate::data::Batch,
) -> Vec<String> {
    let mut lines = Vec::new();
    train(model, repeats, steps, |step, loss, model| {
        if step % LOG_EVERY == 0 {
            lines.push(log_line(step, loss, &scores(model, eval, None)));
        }
    });
    lines
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 7.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let seed = seed.or(7);
    let mut story = Narrative::new("Chapter 19: Induction heads: what trained heads do");

    manual_seed(seed);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    let shown = Repeats::Variable.draw(1);
    let k = shown.ks[0];
    let tokens: Vec<String> = shown.ids.to_vec().iter().map(i64::to_string).collect();
    story
        .step("The data: a repeat of varying length at the end")
        .print(format!("segment length k = {k}"))
        .print(format!("tokens: {}", tokens.join(" ")))
        .print(format!(
            "the last {k} tokens repeat tokens {} to {}",
            TOKENS - 2 * k,
            TOKENS - k - 1
        ));

    let before = scores(&model, &eval, None);
    story
        .step("Before training")
        .print(format!(
            "repeated-token loss: {:.4} (ln 24 = {:.4})",
            before.repeat_loss,
            (VOCAB as f64).ln()
        ))
        .print(format!(
            "previous-token score: {:.4} {:.4}",
            before.previous[0], before.previous[1]
        ))
        .print(format!(
            "induction score: {:.4} {:.4}",
            before.induction[0], before.induction[1]
        ));

    let lines = logged_training(&mut model, Repeats::Variable, STEPS, &eval);
    print_log(story.step("Training: a plateau, then a sudden drop"), &lines);

    let step = story.step("Where the heads look in the repeat");
    for layer in 0..LAYERS {
        let weights = attention_weights(&model, &shown.ids, layer);
        for h in 0..HEADS {
            let head = weights.select(0, 0).select(0, h as i64);
            let keys: Vec<String> = strongest_keys(&head, TOKENS - k)
                .into_iter()
                .map(|(q, key, w)| format!("{q}->{key} {w:.2}"))
                .collect();
            step.print(format!("layer {layer} head {h}: {}", keys.join(" ")));
        }
    }

    let step = story.step("Zeroing one head at a time");
    step.print(format!(
        "no head zeroed: repeated-token loss {:.4}",
        scores(&model, &eval, None).repeat_loss
    ));
    for layer in 0..LAYERS {
        for h in 0..HEADS {
            let ablated = scores(&model, &eval, Some((layer, h)));
            step.print(format!(
                "layer {layer} head {h} zeroed: repeated-token loss {:.4}",
                ablated.repeat_loss
            ));
        }
    }

    let step = story.step("What the heads look for and what they write");
    for h in 0..HEADS {
        step.print(format!(
            "layer 0 head {h}: position's query finds the position one back for {} of {} \
             positions",
            looks_one_back(&model, h),
            TOKENS - 1
        ));
    }
    for layer in 0..LAYERS {
        for h in 0..HEADS {
            step.print(format!(
                "layer {layer} head {h}: writes the token it reads as the likeliest next token \
                 for {} of {VOCAB} tokens",
                copies(&model, layer, h)
            ));
        }
    }

    manual_seed(seed + 1);
    let mut fixed = AttentionOnly::new();
    let fixed_eval = Repeats::Fixed.draw(EVAL);
    let lines = logged_training(&mut fixed, Repeats::Fixed, FIXED_STEPS, &fixed_eval);
    print_log(
        story.step("The shortcut: repeats that always start at position 16"),
        &lines,
    );
    Ok(story)
}

/// The header and the logged lines.
fn print_log(step: &mut Step, lines: &[String]) {
    step.print(HEADER);
    for line in lines {
        step.print(line);
    }
}
