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

/// Every hint command the chapters, the book and the README show a reader runs as written.
#[test]
fn every_hint_command_in_the_course_works() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("README.md")];
    for folder in ["chapters", "book/src"] {
        for entry in walk(&root.join(folder)) {
            let is_text = entry.extension().is_some_and(|e| e == "md" || e == "rs");
            if is_text && !entry.components().any(|c| c.as_os_str() == "target") {
                files.push(entry);
            }
        }
    }
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("-- hint ") {
            let command = text[..at].rsplit('`').next().unwrap_or_default();
            let rest = &text[at..];
            assert!(
                command.trim_end().ends_with("cargo run -p learn"),
                "{}: a hint command that is not learn's: `{command}{}`",
                file.display(),
                rest.split('`').next().unwrap_or_default()
            );
            // The command ends at the closing backtick, or at a comment or the line's end in
            // a code block.
            let words: Vec<&str> = rest["-- ".len()..]
                .split(['`', '\n', '#'])
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            if words.iter().any(|w| w.chars().any(|c| c.is_uppercase())) {
                continue; // a placeholder such as NAME
            }
            let (ok, _, err) = learn(&words);
            assert!(
                ok,
                "{}: `learn {}` fails: {err}",
                file.display(),
                words.join(" ")
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} hint commands found");
}

fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
