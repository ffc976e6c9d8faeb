//! The command line every chapter binary shares:
//!
//! ```text
//! cargo run -p ch05-causal                          # print the chapter's steps
//! cargo run -p ch05-causal -- --seed 7              # the same with manual_seed(7) throughout
//! cargo run -p ch05-causal -- --heatmaps            # with the attention weights as heatmaps
//! cargo run -p ch05-causal -- exercises             # list the exercises and their tests
//! cargo run -p ch05-causal -- hint causal_mask      # hint 1: the idea
//! cargo run -p ch05-causal -- hint causal_mask 3    # hint 3: the API to use
//! cargo run -p ch05-causal --features tch -- --device torch-cpu   # on libtorch's CPU
//! cargo run -p ch05-causal --features tch -- --device cuda        # on a GPU
//! cargo run -p ch05-causal --features tch -- doctor  # is libtorch usable? what to fix
//! ```
//!
//! A chapter that needs options of its own (chapter 11's `--steps N`) describes them in a
//! `clap::Args` struct and calls [`chapter_main_with`]; the others call [`chapter_main`].
//!
//! Hints are data: each chapter keeps them in `exercises/hints.md`, one `## name` section
//! per exercise with three `### ` tiers (the idea, the shapes, the API), shown one at a
//! time so a learner takes only as much help as they need.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use shared::backend::Device;

use crate::narrative::{Narrative, Seed};

#[derive(Parser)]
#[command(about = "Prints this chapter's steps exactly as the PyTorch articles print them")]
struct Args<Options: clap::Args> {
    /// Where to compute: cpu (ours), torch-cpu, cuda or cuda:N (libtorch; needs --features tch).
    /// Defaults to $SHARED_DEVICE, else cpu.
    #[arg(long, global = true)]
    device: Option<String>,
    /// Seeds every manual_seed call of the chapter with S instead of the articles' seeds
    /// (0 to 18446744073709551615, as torch.manual_seed accepts).
    #[arg(long, global = true, value_name = "S")]
    seed: Option<u64>,
    /// Also draws the attention weights of each step as heatmaps, after the step's text
    /// (in colour on a terminal, unless NO_COLOR is set).
    #[arg(long, global = true)]
    heatmaps: bool,
    /// The chapter's own options (none for most chapters).
    #[command(flatten)]
    options: Options,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The options of a chapter that has none of its own.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct NoOptions {}

#[derive(Subcommand)]
enum Command {
    /// Lists the chapter's exercises, their files and the command that tests them.
    Exercises,
    /// Shows one hint for an exercise: 1 = the idea, 2 = the shapes, 3 = the API.
    Hint {
        /// The exercise's name, as `exercises` lists it.
        exercise: String,
        /// Which hint: 1, 2 or 3.
        #[arg(default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
        tier: u8,
    },
    /// Reports whether libtorch can be used (version, CUDA, GPUs, environment) and how to fix
    /// what is missing.
    Doctor,
}

/// Whether to colour the heatmaps: only on a terminal, and not when the environment sets
/// `NO_COLOR` (to anything but the empty string, as <https://no-color.org> asks).
fn colour_wanted() -> bool {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    std::io::stdout().is_terminal() && !no_colour
}

/// One exercise as `exercises/hints.md` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exercise {
    /// The name after `## ` (also the name of its tests).
    pub name: String,
    /// The lines between the name and the first hint: where the stub is, how to test it.
    pub summary: String,
    /// The hints in order, each `(title, text)`.
    pub hints: Vec<(String, String)>,
}

/// Reads the exercises out of a chapter's `hints.md`.
pub fn parse_hints(markdown: &str) -> Vec<Exercise> {
    let mut exercises: Vec<Exercise> = Vec::new();
    // Anchor comments mark the hints for the book's includes; they are not hint text.
    for line in markdown.lines().filter(|l| !l.contains("ANCHOR")) {
        if let Some(name) = line.strip_prefix("## ") {
            exercises.push(Exercise {
                name: name.trim().to_string(),
                summary: String::new(),
                hints: Vec::new(),
            });
        } else if let Some(exercise) = exercises.last_mut() {
            if let Some(title) = line.strip_prefix("### ") {
                exercise
                    .hints
                    .push((title.trim().to_string(), String::new()));
            } else {
                let text = match exercise.hints.last_mut() {
                    Some((_, text)) => text,
                    None => &mut exercise.summary,
                };
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    for exercise in &mut exercises {
        exercise.summary = exercise.summary.trim().to_string();
        for (_, text) in &mut exercise.hints {
            *text = text.trim().to_string();
        }
    }
    exercises
}

/// The `main` of a chapter binary: prints the narrative, run with the seed given by
/// `--seed` (or the articles' seeds), or serves `exercises`, `hint` and `doctor`.
pub fn chapter_main(
    narrative: impl FnOnce(Seed) -> shared::Result<Narrative>,
    hints: &str,
) -> ExitCode {
    chapter_main_with(|seed, _: NoOptions| narrative(seed), hints)
}

/// [`chapter_main`] for a chapter with options of its own: `Options` adds its flags to the
/// command line (and to `--help`), and the narrative receives their values with the seed.
pub fn chapter_main_with<Options: clap::Args>(
    narrative: impl FnOnce(Seed, Options) -> shared::Result<Narrative>,
    hints: &str,
) -> ExitCode {
    let args = Args::<Options>::parse();
    let exercises = parse_hints(hints);
    if let Some(Command::Doctor) = args.command {
        println!("{}", crate::doctor::report());
        return ExitCode::SUCCESS;
    }
    if let Some(name) = &args.device {
        let device = name
            .parse::<Device>()
            .and_then(shared::backend::f_set_device);
        if let Err(error) = device {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    }
    match args.command {
        Some(Command::Doctor) => unreachable!("handled above"),
        None => match narrative(Seed::from(args.seed), args.options) {
            Ok(story) if args.heatmaps => {
                print!("{}", story.text_with_heatmaps(colour_wanted()));
                ExitCode::SUCCESS
            }
            Ok(story) => {
                print!("{story}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
        Some(Command::Exercises) => {
            for exercise in &exercises {
                println!(
                    "{}\n  {}\n",
                    exercise.name,
                    exercise.summary.replace('\n', "\n  ")
                );
            }
            ExitCode::SUCCESS
        }
        Some(Command::Hint { exercise, tier }) => {
            let Some(found) = exercises.iter().find(|e| e.name == exercise) else {
                let names: Vec<&str> = exercises.iter().map(|e| e.name.as_str()).collect();
                eprintln!(
                    "no exercise named {exercise:?}; this chapter has: {}",
                    names.join(", ")
                );
                return ExitCode::FAILURE;
            };
            match found.hints.get(usize::from(tier) - 1) {
                Some((title, text)) => {
                    println!(
                        "{} — hint {tier} of {}: {title}\n\n{text}",
                        found.name,
                        found.hints.len()
                    );
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("{} has {} hints", found.name, found.hints.len());
                    ExitCode::FAILURE
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exercises_and_tiers() {
        let md = "# Exercises\n\n## causal_mask\nIn `exercises/mask.rs`.\n\n### The idea\nHide the future.\n\n### The shapes\n`[n, n]`\n";
        let exercises = parse_hints(md);
        assert_eq!(exercises.len(), 1);
        assert_eq!(exercises[0].name, "causal_mask");
        assert_eq!(exercises[0].summary, "In `exercises/mask.rs`.");
        assert_eq!(
            exercises[0].hints,
            vec![
                ("The idea".to_string(), "Hide the future.".to_string()),
                ("The shapes".to_string(), "`[n, n]`".to_string())
            ]
        );
    }
}
