//! The exercise contract, in both directions, for every chapter:
//! - with `--features exercise` (the learner's stubs), each exercise's test fails;
//! - without it (the chapter's own code, the solution), the same test runs and passes.
//!
//! Exercises and their names come from each chapter's `exercises/hints.md`; the test of
//! exercise `NAME` is every test in `tests/exercises.rs` whose name starts `exercise_NAME`.
//!
//! Each chapter's exercise tests run twice, once with its own code and once with the stubs,
//! and every test's verdict is read from libtest's output. The solutions' tests are the
//! ones `cargo test --workspace` builds (one build for every chapter, nothing compiled
//! again after it); the stubs' are built one chapter at a time (`cargo test -p chNN
//! --features exercise`: the chapter's stubs against the earlier chapters' own code), which
//! compiles only that chapter, since a chapter alone resolves the workspace's features
//! (tests/tests/one_build.rs). That builds in a separate target directory (so it never
//! waits on the `cargo test` that runs it) unless `EXERCISE_CONTRACT_TARGET` names another
//! (`.ci/run` runs the test binary itself and points it at a folder seeded from the
//! workspace's own, where everything is built already). It takes a while: it is
//! `#[ignore]`d in a plain `cargo test`. Once you start solving exercises it fails by
//! design, since your solved stubs pass.
//!
//! `EXERCISE_CONTRACT_CHAPTERS="ch15 ch16"` checks only the chapters whose folder name
//! starts with one of those words (every chapter when it is unset).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use course::hints::parse_hints;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds the `exercises` tests of `selection` (`--workspace`, or `-p chNN`) without
/// running them, with `--features exercise` for the stubs, and returns each chapter's test
/// executable by package name (a chapter's package is named as its folder).
fn build_exercise_tests(
    selection: &[&str],
    stubs: bool,
) -> BTreeMap<String, PathBuf> {
    let root = workspace_root();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(&root)
        .env(
            "CARGO_TARGET_DIR",
            std::env::var_os("EXERCISE_CONTRACT_TARGET").map_or_else(
                || root.join("target").join("exercise-contract"),
                PathBuf::from,
            ),
        )
        .args(["test", "--no-run", "--message-format", "json"])
        .args(selection)
        .args(["--test", "exercises"]);
    if stubs {
        cargo.args(["--features", "exercise"]);
    }
    let output = cargo.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo test --no-run {selection:?} (stubs: {stubs}) failed to build:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // One JSON message a line; a test's artifact names its executable and its manifest.
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact" && m["target"]["name"] == "exercises"
        })
        .filter_map(|m| {
            let executable = PathBuf::from(m["executable"].as_str()?);
            let manifest = Path::new(m["manifest_path"].as_str()?);
            let package = manifest
                .parent()?
                .file_name()?
                .to_string_lossy()
                .to_string();
            Some((package, executable))
        })
        .collect()
}

/// Runs one chapter's built exercise tests (those named `exercise_*`) from the chapter's
/// folder, as `cargo test` would, and returns every test's verdict by name with the output.
fn run_exercise_tests(
    executable: &Path,
    chapter: &Path,
) -> (Vec<(String, bool)>, String) {
    let output = Command::new(executable)
        .current_dir(chapter)
        .env("INSTA_UPDATE", "no")
        .args(["exercise_"])
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let text = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    // libtest prints `test NAME ... ok` or `test NAME ... FAILED`, one line per test.
    let verdicts = stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("test ")?;
            let (name, verdict) = rest.split_once(" ... ")?;
            Some((name.to_string(), verdict.trim() == "ok"))
        })
        .collect();
    (verdicts, text)
}

/// The verdicts of exercise `name`'s tests: those whose name starts `exercise_NAME`.
fn verdicts_of<'a>(all: &'a [(String, bool)], name: &str) -> Vec<&'a (String, bool)> {
    let prefix = format!("exercise_{name}");
    all.iter()
        .filter(|(test, _)| test.starts_with(&prefix))
        .collect()
}

#[test]
#[ignore = "builds every chapter's stubs; run by .ci/run with --ignored"]
fn every_stub_fails_and_every_solution_passes() {
    let only: Option<Vec<String>> = std::env::var("EXERCISE_CONTRACT_CHAPTERS")
        .ok()
        .map(|v| v.split_whitespace().map(String::from).collect());
    let chosen = |p: &Path| {
        let name = p.file_name().expect("name").to_string_lossy().to_string();
        only.as_ref()
            .is_none_or(|words| words.iter().any(|w| name.starts_with(w.as_str())))
    };
    let mut chapters: Vec<PathBuf> =
        std::fs::read_dir(workspace_root().join("chapters"))
            .expect("chapters/")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.join("exercises").join("hints.md").exists() && chosen(p))
            .collect();
    chapters.sort();
    assert!(!chapters.is_empty(), "no chapter has exercises");
    let solution_executables = build_exercise_tests(&["--workspace"], false);
    let mut problems = Vec::new();
    for chapter in &chapters {
        let package = chapter
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let hints =
            std::fs::read_to_string(chapter.join("exercises").join("hints.md"))
                .expect("hints.md");
        let exercises = parse_hints(&hints);
        if !(3..=6).contains(&exercises.len()) {
            problems.push(format!(
                "{package}: {} exercises, expected 3 to 6",
                exercises.len()
            ));
        }
        let Some(solution_tests) = solution_executables.get(&package) else {
            problems.push(format!(
                "{package}: has exercises but no tests/exercises.rs"
            ));
            continue;
        };
        let (solutions, solution_text) = run_exercise_tests(solution_tests, chapter);
        let stub_tests = build_exercise_tests(&["-p", &package], true);
        let (stubs, stub_text) = run_exercise_tests(&stub_tests[&package], chapter);
        for exercise in &exercises {
            if exercise.hints.len() != 3 {
                problems.push(format!(
                    "{package}/{}: {} hint tiers, expected 3",
                    exercise.name,
                    exercise.hints.len()
                ));
            }
            let solved = verdicts_of(&solutions, &exercise.name);
            if solved.is_empty() || solved.iter().any(|(_, ok)| !ok) {
                problems.push(format!(
                    "{package}/{}: the solution does not pass its test (no test, or one \
                     failing):\n{solution_text}",
                    exercise.name
                ));
            }
            // A stub must compile and then fail its test (not fail to build).
            let stubbed = verdicts_of(&stubs, &exercise.name);
            if stubbed.is_empty() || stubbed.iter().all(|(_, ok)| *ok) {
                problems.push(format!(
                    "{package}/{}: the stub does not fail its test:\n{stub_text}",
                    exercise.name
                ));
            }
        }
        eprintln!("{package}: {} exercises checked", exercises.len());
    }
    assert!(
        problems.is_empty(),
        "exercise contract broken:\n{}",
        problems.join("\n")
    );
}
