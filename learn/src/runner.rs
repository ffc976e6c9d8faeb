//! Running a chapter's exercise tests on the learner's code: `cargo test -p CHAPTER
//! --features exercise --test exercises`, one build and one run for all the exercises of the
//! chapter that match a filter.

use std::path::Path;
use std::process::Command;

use crate::course_map::Exercise;
use crate::verdict::{Run, Verdict, parse_run, verdict};

/// Runs the exercise tests of `chapter` whose names start with `filter`, from the workspace
/// at `root`, and reads the results.
pub fn run_chapter(root: &Path, chapter: &str, filter: &str) -> Result<Run, String> {
    // `cargo run` sets CARGO to the cargo that runs us; a plain `learn` finds it on the PATH.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["test", "-q", "-p", chapter, "--features", "exercise"])
        .args(["--test", "exercises", "--", "--format", "pretty", filter])
        // A short panic message, no backtrace.
        .env("RUST_BACKTRACE", "0")
        // Nothing is written into the learner's tree: no snapshot proposals, no proptest
        // regression files.
        .env("INSTA_UPDATE", "no")
        .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1")
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    Ok(parse_run(
        &String::from_utf8_lossy(&output.stdout),
        &String::from_utf8_lossy(&output.stderr),
    ))
}

/// Runs one exercise's tests and gives its verdict.
pub fn check(root: &Path, exercise: &Exercise) -> Result<Verdict, String> {
    let prefix = exercise.test_prefix();
    let run = run_chapter(root, &exercise.chapter, &prefix)?;
    Ok(verdict(&run, &prefix))
}

/// The verdict on every exercise of `exercises`, one build and run per chapter, in order.
/// `on_chapter` hears about each chapter once its tests have run; `stop_at_first_undone`
/// ends at the first chapter with an exercise not done (what `watch` needs to start).
pub fn check_all(
    root: &Path,
    exercises: &[Exercise],
    stop_at_first_undone: bool,
    mut on_chapter: impl FnMut(&str, &[(&Exercise, Verdict)]),
) -> Result<Vec<(usize, Verdict)>, String> {
    let mut verdicts = Vec::new();
    let mut start = 0;
    while start < exercises.len() {
        let chapter = &exercises[start].chapter;
        let end = start
            + exercises[start..]
                .iter()
                .take_while(|e| &e.chapter == chapter)
                .count();
        let run = run_chapter(root, chapter, "exercise_")?;
        let chapter_verdicts: Vec<(&Exercise, Verdict)> = exercises[start..end]
            .iter()
            .map(|e| (e, verdict(&run, &e.test_prefix())))
            .collect();
        on_chapter(chapter, &chapter_verdicts);
        let all_done = chapter_verdicts.iter().all(|(_, v)| v.passed());
        verdicts.extend(
            chapter_verdicts
                .into_iter()
                .enumerate()
                .map(|(i, (_, v))| (start + i, v)),
        );
        if stop_at_first_undone && !all_done {
            break;
        }
        start = end;
    }
    Ok(verdicts)
}
