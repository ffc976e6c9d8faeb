//! `learn`: the exercises of *Attention from Scratch*, one after the other.
//!
//! ```text
//! cargo run -p learn                            # every exercise, done or not, and the next one
//! cargo run -p learn -- watch                   # work on the next one; re-runs on every save
//! cargo run -p learn -- check ch05-causal causal_mask
//! cargo run -p learn -- hint ch05-causal causal_mask 2
//! cargo run -p learn -- reset ch05-causal causal_mask
//! ```
//!
//! Whether an exercise is done is read from its tests, every time: nothing is stored, and
//! nothing is ever written to your exercise files.

mod course_map;
mod heatmap;
mod runner;
mod verdict;
mod watch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use course_map::Exercise;

#[derive(Parser)]
#[command(
    name = "learn",
    about = "The exercises of the course, in order: which are done, the next one, its tests and hints"
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Every exercise of every chapter, done or not (the default).
    List,
    /// Work on the next exercise not done: re-runs its tests on every save of its file.
    Watch {
        /// Start at this chapter's exercise instead (with NAME).
        chapter: Option<String>,
        /// The exercise's name, e.g. causal_mask.
        name: Option<String>,
    },
    /// Run one exercise's tests: prints the verdict, exits with 0 when it passes.
    Check { chapter: String, name: String },
    /// Show a hint: 1 the idea, 2 the shapes, 3 the API.
    Hint {
        chapter: String,
        name: String,
        #[arg(default_value_t = 1)]
        tier: usize,
    },
    /// Print the git command that puts an exercise's file back as it was (runs nothing).
    Reset { chapter: String, name: String },
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args.command.unwrap_or(Command::List)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    let here =
        std::env::current_dir().map_err(|e| format!("no current folder: {e}"))?;
    let root = course_map::find_root(&here).ok_or(
        "run `learn` inside the course's folder (the one with chapters/ in it)",
    )?;
    let exercises = course_map::all_exercises(&root)?;
    match command {
        Command::List => list(&root, &exercises),
        Command::Watch { chapter, name } => {
            let start = match (chapter, name) {
                (Some(chapter), Some(name)) => {
                    Some(position(&exercises, &chapter, &name)?)
                }
                (None, None) => None,
                _ => {
                    return Err(
                        "watch takes a chapter and an exercise name, or neither"
                            .into(),
                    );
                }
            };
            watch::watch(&root, &exercises, start)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { chapter, name } => {
            let exercise = course_map::find(&exercises, &chapter, &name)?;
            let verdict = runner::check(&root, exercise)?;
            println!("{exercise}: {verdict}");
            Ok(if verdict.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Hint {
            chapter,
            name,
            tier,
        } => {
            let exercise = course_map::find(&exercises, &chapter, &name)?;
            let text = hint(exercise, tier)?;
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Reset { chapter, name } => {
            let exercise = course_map::find(&exercises, &chapter, &name)?;
            println!(
                "To start {exercise} again (this loses your changes to its file), run:"
            );
            println!("  {}", reset_command(exercise));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn position(
    exercises: &[Exercise],
    chapter: &str,
    name: &str,
) -> Result<usize, String> {
    let found = course_map::find(exercises, chapter, name)?;
    Ok(exercises
        .iter()
        .position(|e| e == found)
        .expect("found in the list"))
}

/// Prints every exercise, marked done or not, chapter by chapter as their tests finish.
fn list(root: &Path, exercises: &[Exercise]) -> Result<ExitCode, String> {
    eprintln!(
        "Running the exercises' tests, one chapter at a time (the first build takes a few minutes)…"
    );
    let verdicts = runner::check_all(root, exercises, false, |chapter, verdicts| {
        let done = verdicts.iter().filter(|(_, v)| v.passed()).count();
        println!("{chapter} ({done}/{} done)", verdicts.len());
        for (exercise, verdict) in verdicts {
            let mark = if verdict.passed() { "[x]" } else { "[ ]" };
            let state = match verdict {
                verdict::Verdict::Passed => "done".to_string(),
                verdict::Verdict::NotStarted => "not started".to_string(),
                verdict::Verdict::Failed { test, .. } => format!("failing: {test}"),
                verdict::Verdict::DoesNotCompile(_) => "does not compile".to_string(),
                verdict::Verdict::NoTests => "no tests found".to_string(),
            };
            println!("  {mark} {:<28} {state}", exercise.name);
        }
    })?;
    let done = verdicts.iter().filter(|(_, v)| v.passed()).count();
    println!("\n{done} of {} exercises done.", exercises.len());
    match verdicts.iter().find(|(_, v)| !v.passed()) {
        Some((index, _)) => {
            let next = &exercises[*index];
            println!("next: {next}, in {}", next.stub.display());
            println!("      `cargo run -p learn -- watch` to work on it");
        }
        None => println!("All done: every exercise passes its tests."),
    }
    Ok(ExitCode::SUCCESS)
}

/// Hint `tier` (from 1) of an exercise, with its title.
fn hint(exercise: &Exercise, tier: usize) -> Result<String, String> {
    let count = exercise.hints.len();
    match tier.checked_sub(1).and_then(|i| exercise.hints.get(i)) {
        Some((title, text)) => Ok(format!(
            "{} — hint {tier} of {count}: {title}\n\n{text}",
            exercise.name
        )),
        None => Err(format!("{exercise} has hints 1 to {count}")),
    }
}

/// The command that restores an exercise's stub from git.
fn reset_command(exercise: &Exercise) -> String {
    format!("git checkout -- {}", slash_path(&exercise.stub))
}

/// A relative path with `/` between its parts, as git prints paths on every system.
fn slash_path(path: &Path) -> String {
    path.iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The absolute path of an exercise's file, for the learner's editor.
fn stub_path(root: &Path, exercise: &Exercise) -> PathBuf {
    root.join(&exercise.stub)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causal_mask() -> Exercise {
        Exercise {
            chapter: "ch05-causal".to_string(),
            name: "causal_mask".to_string(),
            stub: Path::new("chapters/ch05-causal/exercises/mask.rs").to_path_buf(),
            hints: vec![
                ("The idea".to_string(), "Hide the future.".to_string()),
                ("The shapes".to_string(), "`[n, n]`".to_string()),
                ("The API".to_string(), "`triu`".to_string()),
            ],
        }
    }

    #[test]
    fn reset_prints_the_git_command_for_the_stub() {
        assert_eq!(
            reset_command(&causal_mask()),
            "git checkout -- chapters/ch05-causal/exercises/mask.rs"
        );
    }

    #[test]
    fn hints_go_from_1_to_3() {
        let exercise = causal_mask();
        assert_eq!(
            hint(&exercise, 2).unwrap(),
            "causal_mask — hint 2 of 3: The shapes\n\n`[n, n]`"
        );
        assert!(hint(&exercise, 0).is_err());
        assert!(hint(&exercise, 4).unwrap_err().contains("hints 1 to 3"));
    }
}
