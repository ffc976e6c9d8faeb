//! A learner's session, scripted, in a scratch copy of the workspace (never in the real
//! `exercises/`): `learn check` says an untouched exercise is not started; once the
//! chapter's own solution is copied over the stub it passes; and `learn watch`, fed
//! commands on stdin, moves on from it, shows the next exercise and quits.
//!
//! It builds a chapter in the copy, which takes a while: `#[ignore]`d in a plain
//! `cargo test`, run by `.ci/run` with `-- --ignored`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Copies the workspace's files, without build outputs, git, virtual environments or the
/// downloaded model (`models/`, chapter 20's).
fn copy_workspace(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("make the scratch folder");
    for entry in std::fs::read_dir(from).expect("read a folder") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let kind = entry.file_type().expect("file type");
        let skip = ["target", ".git", "build", "models"]
            .contains(&name.to_str().unwrap_or(""))
            || name.to_string_lossy().starts_with(".venv");
        if skip || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            copy_workspace(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).expect("copy a file");
        }
    }
}

/// Runs `learn ARGS` in `dir` with `stdin` as its input.
fn learn(dir: &Path, target: &Path, args: &[&str], stdin: &str) -> (Output, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_learn"))
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("learn starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("learn ends");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, text)
}

/// The names of the files in a folder, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read a folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[ignore = "builds a chapter in a scratch copy of the workspace; run by .ci/run with --ignored"]
fn a_scripted_session_solves_an_exercise_and_moves_on() {
    let real = workspace_root();
    let scratch =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("learn-e2e-workspace");
    // A build folder of its own, kept from run to run so the dependencies are built once.
    // Not the real tree's: cargo tells two copies of the workspace apart by the files'
    // times only, so a shared folder could hand one copy the other's test binary.
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("learn-e2e-target");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch).expect("remove the last scratch copy");
    }
    copy_workspace(&real, &scratch);
    let chapter = scratch.join("chapters").join("ch02-dot-product");
    let stub = chapter.join("exercises").join("scores.rs");
    let exercises_before = listing(&chapter.join("exercises"));
    assert!(
        std::fs::read_to_string(&stub)
            .expect("stub")
            .contains("todo!("),
        "the scratch copy's stub is already solved: start from an untouched workspace"
    );

    let args = ["check", "ch02-dot-product", "attention_scores"];
    let (output, text) = learn(&scratch, &target, &args, "");
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("ch02-dot-product attention_scores: not started"),
        "{text}"
    );

    std::fs::copy(chapter.join("src").join("scores.rs"), &stub)
        .expect("copy the solution");
    let (output, text) = learn(&scratch, &target, &args, "");
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ch02-dot-product attention_scores: passed"),
        "{text}"
    );

    // Watch from the solved exercise: it passes and moves on to context_vector by itself,
    // `n` skips to all_at_once, `q` quits.
    let watch = ["watch", "ch02-dot-product", "attention_scores"];
    let (output, text) = learn(&scratch, &target, &watch, "h\nn\nq\n");
    assert_eq!(output.status.code(), Some(0), "{text}");
    let order = [
        "== ch02-dot-product attention_scores",
        "passed",
        "== ch02-dot-product context_vector",
        "not started",
        "Edit chapters/ch02-dot-product/exercises/context.rs",
        "context_vector — hint 1 of 3: The idea",
        "== ch02-dot-product all_at_once",
    ];
    let mut rest = text.as_str();
    for expected in order {
        let at = rest.find(expected).unwrap_or_else(|| {
            panic!("{expected:?} missing, or out of order, in:\n{text}")
        });
        rest = &rest[at + expected.len()..];
    }

    // Nothing was written into the exercises, and the real stub is untouched.
    assert_eq!(listing(&chapter.join("exercises")), exercises_before);
    let real_stub = real.join("chapters/ch02-dot-product/exercises/scores.rs");
    assert!(
        std::fs::read_to_string(real_stub)
            .expect("real stub")
            .contains("todo!(")
    );
    std::fs::remove_dir_all(&scratch).expect("remove the scratch copy");
}
