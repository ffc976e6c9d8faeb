//! The chapter's printed steps, in the order of the reference script
//! `reference/ch11_training.py`.

use course::{Narrative, Seed, Step};
use shared::{Result, Tensor};

use crate::model::HEADS;
use crate::run::{DEFAULT_STEPS, training_run};
use crate::task::Task;

/// The chapter's own command-line option.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct TrainOptions {
    /// Train N steps instead of 60 (the reference script takes the same `--steps N`). A
    /// progress bar shows on the terminal while it trains.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STEPS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub steps: u32,
}

/// Runs the chapter with the default number of steps and returns what it prints; `seed`
/// replaces the chapter's seed 123.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    story(seed, DEFAULT_STEPS, |_, _| {})
}

/// The binary's entry: [`narrative`] with `--steps N`, drawing a progress bar on stderr
/// when stderr is a terminal (never into the printed text).
pub fn run(seed: Seed, options: TrainOptions) -> Result<Narrative> {
    let bar = progress::Bar::new(options.steps);
    let story = story(seed, options.steps, |_, loss| bar.step(loss));
    bar.finish();
    story
}

/// The progress bar of a long run: indicatif's on a terminal, none in the book's
/// WebAssembly module (no terminal, and indicatif's clock would need JavaScript glue).
mod progress {
    #[cfg(not(target_family = "wasm"))]
    pub struct Bar(indicatif::ProgressBar);

    #[cfg(not(target_family = "wasm"))]
    impl Bar {
        /// A bar of `steps` steps on stderr if stderr is a terminal, else a hidden one.
        pub fn new(steps: u32) -> Bar {
            use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
            use std::io::IsTerminal;
            let bar = if std::io::stderr().is_terminal() {
                ProgressBar::with_draw_target(
                    Some(steps.into()),
                    ProgressDrawTarget::stderr(),
                )
            } else {
                ProgressBar::hidden()
            };
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps, loss {msg}, {eta} left",
                )
                .expect("a valid template"),
            );
            Bar(bar)
        }

        /// One step done, with its loss.
        pub fn step(&self, loss: f32) {
            self.0.set_message(format!("{loss:.4}"));
            self.0.inc(1);
        }

        /// Removes the bar from the terminal.
        pub fn finish(&self) {
            self.0.finish_and_clear();
        }
    }

    #[cfg(target_family = "wasm")]
    pub struct Bar;

    #[cfg(target_family = "wasm")]
    impl Bar {
        pub fn new(_steps: u32) -> Bar {
            Bar
        }
        pub fn step(&self, _loss: f32) {}
        pub fn finish(&self) {}
    }
}

/// The chapter: the task, the model, its attention before training, the loss at every
/// step, the accuracy, its attention after training.
fn story(seed: Seed, steps: u32, on_step: impl FnMut(u32, f32)) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 11: Training: attention learns");
    let task = Task::TWO_BACK;
    let run = training_run(seed.or(123), steps, on_step);

    story
        .step("The task: the token two places back")
        .print(format!("tokens:  {}", run.shown.select(0, 0)))
        .print(format!(
            "targets: {} (for positions 2 to 7)",
            task.targets(&run.shown)
        ));

    let model_step = story.step("The model");
    let mut count = 0;
    for (name, p) in run.model.named_parameters() {
        model_step.print_shape(name, p);
        count += p.numel();
    }
    model_step.print(format!("parameters: {count}"));

    let step = story.step("Attention weights before training");
    print_heads(step, &run.before);
    step.heatmap_indexed("before training, head", &run.before.select(0, 0))?;

    let step = story.step("Training: the loss at every step");
    for (i, loss) in run.losses.iter().enumerate() {
        step.print(format!("step {:3}: loss {loss:.4}", i + 1));
    }

    let (correct, total) = run.correct;
    story
        .step("Accuracy on a fresh batch")
        .print(format!("correct: {correct}/{total}"));

    let step = story.step("Attention weights after training");
    print_heads(step, &run.after);
    step.heatmap_indexed("after training, head", &run.after.select(0, 0))?;
    Ok(story)
}

/// The attention weights of the sequence `ids[0]`, head by head, two decimals, row `i`
/// holding what position `i` attends to (positions 0 to `i`; the mask hides the rest).
///
/// # Shapes
/// `weights`: `[1, HEADS, tokens, tokens]`.
fn print_heads(step: &mut Step, weights: &Tensor) {
    for h in 0..HEADS {
        step.print(format!("head {h}:"));
        let head = weights.select(0, 0).select(0, h);
        for i in 0..head.size(0) {
            let row: Vec<String> = head
                .select(0, i)
                .slice(0, ..=i)
                .to_vec()
                .iter()
                .map(|w| format!("{w:.2}"))
                .collect();
            step.print(format!("  {i}: {}", row.join(" ")));
        }
    }
}
