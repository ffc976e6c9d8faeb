//! What a merge can leave behind unnoticed, because nothing else reads it on every run:
//! conflict markers in a file, and a shell script (a benchmark, the book's tools) that no
//! longer parses.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Folders that hold what tools make or download, not what we write (and `book/book`, the
/// book's build).
const SKIPPED: [&str; 4] = ["target", ".git", "models", "node_modules"];

/// Every file under `dir` whose name ends in one of `endings` (or is `.ci/run`), sorted.
fn files(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            let built_book = name == "book" && dir.ends_with("book");
            if !built_book
                && !SKIPPED.contains(&name.as_str())
                && !name.starts_with(".venv")
            {
                found.extend(files(&path, endings));
            }
        } else if endings.iter().any(|e| name.ends_with(e))
            || path.ends_with(".ci/run")
        {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The lines of `text` that open and close a conflict a merge could not resolve (the
/// `=======` between them is left out: Markdown underlines headings with it).
fn conflict_markers(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ")
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn no_file_holds_a_merge_conflict() {
    let endings = [
        ".rs", ".sh", ".py", ".md", ".toml", ".txt", ".jinja", ".js", ".css",
    ];
    let mut found = Vec::new();
    for path in files(&root(), &endings) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not text
        };
        for (line, marker) in conflict_markers(&text) {
            found.push(format!("{}:{line}: {marker}", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "merge conflict markers:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_shell_script_parses() {
    if Command::new("bash").arg("--version").output().is_err() {
        eprintln!("skipped: no bash on this machine");
        return;
    }
    let mut broken = Vec::new();
    for path in files(&root(), &[".sh"]) {
        let out = Command::new("bash")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("bash");
        if !out.status.success() {
            broken.push(format!(
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(
        broken.is_empty(),
        "scripts bash cannot parse:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    let merged = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> topic\nd\n";
    assert_eq!(
        conflict_markers(merged),
        [(2, "<<<<<<< HEAD"), (6, ">>>>>>> topic")]
    );
    assert!(conflict_markers("A heading\n=======\n").is_empty());
    let scripts = files(&root(), &[".sh"]);
    assert!(
        scripts
            .iter()
            .any(|p| p.ends_with("perf/scripts/bench-part4.sh")),
        "{scripts:?}"
    );
}
