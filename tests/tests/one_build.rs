//! One build serves every command: `cargo test -p chNN` (a learner's exercises, `learn`,
//! the exercise contract) after `cargo test --workspace` compiles the chapter alone.
//!
//! Cargo turns on a dependency's features from the packages a command selects. Built
//! alone, a chapter would get some crates with fewer features than the whole workspace
//! gives them (`num-traits` without `libm`, `either` without `use_std`, ...), and every
//! crate above them, `ndarray`, `rayon`, `shared` and each chapter on the way, would be
//! compiled a second time. `course` names those features (its Cargo.toml says why), and
//! this test fails, naming the crate and its features, when a new dependency brings one
//! that `course` does not name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate `selection` builds for its tests, as `name version [features]`, from
/// `cargo tree` (no network: the lock file's crates are here once anything was built).
fn resolved(selection: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .current_dir(root())
        .args([
            "tree",
            "--offline",
            "--prefix",
            "none",
            "-e",
            "normal,build,dev",
        ])
        .args(["-f", "{p} [{f}]"])
        .args(selection)
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree {selection:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        // A path dependency's line names its folder, and a repeated subtree ends with (*).
        .map(|line| {
            let line = line.trim_end_matches(" (*)");
            match line.split_once(" (/") {
                Some((crate_, rest)) => {
                    let features = rest.split_once(") ").map_or("", |(_, f)| f);
                    format!("{crate_} {features}")
                }
                None => line.to_string(),
            }
        })
        .collect()
}

#[test]
fn a_chapter_alone_resolves_the_workspace_features() {
    let workspace = resolved(&["--workspace"]);
    let mut chapters: Vec<String> = std::fs::read_dir(root().join("chapters"))
        .expect("chapters/")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    chapters.sort();
    let mut problems = Vec::new();
    for chapter in &chapters {
        for line in resolved(&["-p", chapter]).difference(&workspace) {
            problems.push(format!("{chapter}: {line}"));
        }
    }
    assert!(
        problems.is_empty(),
        "built alone, these chapters resolve a crate with other features than the workspace \
         does, so `cargo test -p` would compile it (and all above it) again; name the \
         workspace's features of that crate in course/Cargo.toml:\n{}\n(the workspace has: \
         {})",
        problems.join("\n"),
        problems
            .iter()
            .filter_map(|p| p.split_whitespace().nth(1))
            .flat_map(|name| workspace
                .iter()
                .filter(move |l| l.starts_with(&format!("{name} "))))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join("; ")
    );
}
