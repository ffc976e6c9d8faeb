//! `learn hint` and `learn reset`, the exercises' one front door, from the workspace root: a
//! hint one tier at a time, clear errors for a name that is not an exercise, and the git
//! command that starts an exercise again.

use std::process::Command;

fn learn(args: &[&str]) -> (bool, String, String) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(env!("CARGO_BIN_EXE_learn"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("learn runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn shows_hints_one_tier_at_a_time() {
    let (ok, out, _) = learn(&["hint", "ch05-causal", "causal_mask", "2"]);
    assert!(ok);
    assert!(out.starts_with("causal_mask — hint 2 of 3"), "{out}");
    let (ok, _, err) = learn(&["hint", "ch05-causal", "causal_mask", "4"]);
    assert!(!ok);
    assert!(err.contains("has hints 1 to 3"), "{err}");
}

#[test]
fn names_what_exists_when_a_name_does_not() {
    let (ok, _, err) = learn(&["hint", "ch05-causal", "no_such_exercise"]);
    assert!(!ok);
    assert!(err.contains("causal_mask"), "{err}");
    let (ok, _, err) = learn(&["hint", "ch99-nothing", "causal_mask"]);
    assert!(!ok);
    assert!(err.contains("no chapter named \"ch99-nothing\""), "{err}");
}

#[test]
fn reset_prints_the_git_command_and_runs_nothing() {
    let (ok, out, _) = learn(&["reset", "ch05-causal", "causal_mask"]);
    assert!(ok);
    assert!(
        out.contains("git checkout -- chapters/ch05-causal/exercises/"),
        "{out}"
    );
}
