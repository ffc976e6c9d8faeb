//! The chapter's printed steps, in the order of the reference script
//! `reference/ch19_induction_heads.py`.

use course::{Narrative, Seed, Step};
use shared::{Error, Result, manual_seed};

use crate::checkpoint::{Checkpoint, LogEntry};

use crate::circuits::{copies, looks_one_back, strongest_keys};
use crate::data::{Repeats, TOKENS, VOCAB};
use crate::model::{AttentionOnly, HEADS, LAYERS};
use crate::runs::{EVAL, LOG_EVERY, SAVED_RUN, SEED, train_runs};
use crate::scores::{attention_weights, scores};

const HEADER: &str = " step    loss  repeat   prev h0 prev h1   ind h0  ind h1";

/// One logged line: the step, its training loss and the scores on the evaluation batch.
fn log_line(entry: &LogEntry) -> String {
    let s = &entry.scores;
    format!(
        "{:5}  {:.4}  {:.4}   {:.4} {:.4}   {:.4} {:.4}",
        entry.step,
        entry.loss,
        s.repeat_loss,
        s.previous[0],
        s.previous[1],
        s.induction[0],
        s.induction[1]
    )
}

/// The chapter's own command-line options.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RunOptions {
    /// Train from the seed instead of reading the saved run (the default run reads it;
    /// any other `--seed` trains). Takes a while: use `cargo run --release`.
    #[arg(long)]
    pub train: bool,
    /// Train, and write the run to PATH (the saved run is written this way).
    #[arg(long, value_name = "PATH")]
    pub write_checkpoint: Option<std::path::PathBuf>,
}

/// The binary's entry: [`narrative`], or training first with `--train`, and writing the
/// run with `--write-checkpoint PATH`.
pub fn run(seed: Seed, options: RunOptions) -> Result<Narrative> {
    if options.train || options.write_checkpoint.is_some() {
        let run = train_runs(seed.or(SEED));
        if let Some(path) = &options.write_checkpoint {
            std::fs::write(path, run.to_bytes()).map_err(|e| {
                Error::InvalidArgument {
                    op: "write_checkpoint",
                    detail: format!("cannot write {}: {e}", path.display()),
                }
            })?;
        }
        return story(seed.or(SEED), &run);
    }
    narrative(seed)
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 7.
/// The default seed reads the saved run ([`SAVED_RUN`]); any other trains first.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let run = match seed.or(SEED) {
        SEED => Checkpoint::from_bytes(SAVED_RUN, &AttentionOnly::new(), LOG_EVERY)?,
        other => train_runs(other),
    };
    story(seed.or(SEED), &run)
}

/// The printed steps of a trained run.
fn story(seed: u64, run: &Checkpoint) -> Result<Narrative> {
    let mut story =
        Narrative::new("Chapter 19: Induction heads: what trained heads do");

    manual_seed(seed);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    let shown = Repeats::Variable.draw(1);
    let k = shown.ks[0];
    let tokens: Vec<String> = shown.ids.to_vec().iter().map(i64::to_string).collect();
    story
        .step("The data: a repeat of varying length at the end")
        .print(format!("segment length k = {k}"))
        .print("tokens:")
        .print(tokens.join(" "))
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

    run.load_into(&mut model);
    print_log(
        story.step("Training: a plateau, then a sudden drop"),
        &run.log,
    );

    let step = story.step("Where the heads look in the repeat");
    for layer in 0..LAYERS {
        let weights = attention_weights(&model, &shown.ids, layer);
        for h in 0..HEADS {
            let head = weights.select(0, 0).select(0, h);
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
                "layer {layer} head {h}: its likeliest output is the token it reads, \
                 for {} of {VOCAB} tokens",
                copies(&model, layer, h)
            ));
        }
    }

    print_log(
        story.step("The shortcut: repeats that always start at position 16"),
        &run.fixed_log,
    );
    Ok(story)
}

/// The header and the logged lines.
fn print_log(step: &mut Step, log: &[LogEntry]) {
    step.print(HEADER);
    for entry in log {
        step.print(log_line(entry));
    }
}
