//! One build serves every command: `cargo test -p chNN` (a learner's exercises, `learn`,
//! the exercise contract) after `cargo test --workspace` compiles the chapter alone, and
//! after `cargo run -p chNN` it compiles the chapter and the test tools alone.
//!
//! Cargo turns on a dependency's features from the packages a command selects. Built
//! alone, a chapter would get some crates with fewer features than the whole workspace
//! gives them (`num-traits` without `libm`, `either` without `use_std`, ...), and every
//! crate above them, `ndarray`, `rayon`, `shared` and each chapter on the way, would be
//! compiled a second time. `course` names those features (its Cargo.toml says why), and
//! the first test fails, naming the crate and its features, when a new dependency brings one
//! that `course` does not name. A test build also adds the test tools (insta, proptest's
//! file cache), and their dependencies turn on features of crates the program shares
//! (`bitflags/std`, `once_cell/default`): the second test fails when `cargo run -p chNN`
//! resolves a crate with features other than its `cargo test -p chNN` does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate `selection` builds for its tests, as `name version [features]`, from
/// `cargo tree` (no network: the lock file's crates are here once anything was built).
fn resolved(selection: &[&str]) -> BTreeSet<String> {
    resolved_for(selection, "normal,build,dev")
}

/// Every crate `selection` builds along `edges` (`normal,build` for a program, with `dev`
/// for its tests), as `name version [features]`.
fn resolved_for(selection: &[&str], edges: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .current_dir(root())
        .args(["tree", "--offline", "--prefix", "none", "-e", edges])
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

/// The chapters' package names, sorted.
fn chapters() -> Vec<String> {
    let mut chapters: Vec<String> = std::fs::read_dir(root().join("chapters"))
        .expect("chapters/")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    chapters.sort();
    chapters
}

#[test]
fn a_chapter_alone_resolves_the_workspace_features() {
    let workspace = resolved(&["--workspace"]);
    let chapters = chapters();
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

#[test]
fn a_chapter_run_then_tested_compiles_no_dependency_twice() {
    let mut problems = Vec::new();
    for chapter in chapters() {
        let tested = resolved(&["-p", &chapter]);
        for line in
            resolved_for(&["-p", &chapter], "normal,build").difference(&tested)
        {
            let name = line.split_whitespace().next().unwrap_or_default();
            let in_tests: Vec<&String> = tested
                .iter()
                .filter(|l| l.split_whitespace().next() == Some(name))
                .collect();
            problems.push(format!("{chapter}: run {line}, tested {in_tests:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "`cargo run -p` of these chapters resolves a crate with other features than their \
         `cargo test -p` does, so a learner's first check compiles it (and all above it) \
         again; name its test features in course/Cargo.toml (or the chapter's own, for a \
         crate only it links):\n{}",
        problems.join("\n")
    );
}
