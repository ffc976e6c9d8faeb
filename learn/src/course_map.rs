//! The exercises of the course, in book order: the chapters in order, and in each chapter
//! the exercises in the order of its `exercises/hints.md`.

use std::fmt;
use std::path::{Path, PathBuf};

use course::hints::parse_hints;

/// One exercise: which chapter, its name (also the prefix of its tests), its stub file and
/// its hints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exercise {
    /// The chapter's package, e.g. `ch05-causal`.
    pub chapter: String,
    /// The name after `## ` in hints.md, e.g. `causal_mask`.
    pub name: String,
    /// The file to edit, relative to the workspace root, e.g.
    /// `chapters/ch05-causal/exercises/mask.rs`.
    pub stub: PathBuf,
    /// The hint tiers in order, each `(title, text)`.
    pub hints: Vec<(String, String)>,
}

impl Exercise {
    /// The prefix of the names of this exercise's tests in the chapter's `tests/exercises.rs`.
    pub fn test_prefix(&self) -> String {
        format!("exercise_{}", self.name)
    }
}

impl fmt::Display for Exercise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.chapter, self.name)
    }
}

/// Finds the workspace of the course: the nearest folder, from `start` upwards, that has a
/// `Cargo.toml` and a `chapters/` folder.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file() && dir.join("chapters").is_dir())
        .map(Path::to_path_buf)
}

/// Every exercise of every chapter under `root`, in book order.
pub fn all_exercises(root: &Path) -> Result<Vec<Exercise>, String> {
    let chapters_dir = root.join("chapters");
    let entries = std::fs::read_dir(&chapters_dir)
        .map_err(|e| format!("cannot read {}: {e}", chapters_dir.display()))?;
    let mut chapters: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("exercises").join("hints.md").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    // `chNN-…` names sort in book order.
    chapters.sort();
    let mut exercises = Vec::new();
    for chapter in chapters {
        let hints_path = chapters_dir
            .join(&chapter)
            .join("exercises")
            .join("hints.md");
        let markdown = std::fs::read_to_string(&hints_path)
            .map_err(|e| format!("cannot read {}: {e}", hints_path.display()))?;
        for exercise in parse_hints(&markdown) {
            let file = stub_file(&exercise.summary).ok_or_else(|| {
                format!(
                    "{}: the summary of {} names no `exercises/….rs` file",
                    hints_path.display(),
                    exercise.name
                )
            })?;
            exercises.push(Exercise {
                chapter: chapter.clone(),
                name: exercise.name,
                stub: Path::new("chapters").join(&chapter).join(file),
                hints: exercise.hints,
            });
        }
    }
    Ok(exercises)
}

/// The stub file an exercise's summary names: the first `` `exercises/….rs` `` (or
/// `` `exercises/….wgsl` ``) in it
/// ("Write `causal_mask` in `exercises/mask.rs`."). The summary is what the learner reads,
/// so it is the one place that must name the right file anyway.
pub fn stub_file(summary: &str) -> Option<&str> {
    summary.split('`').skip(1).step_by(2).find(|code| {
        // Rust, or WGSL for a GPU kernel's function (chapter 21).
        code.starts_with("exercises/")
            && (code.ends_with(".rs") || code.ends_with(".wgsl"))
    })
}

/// The exercise `chapter`/`name`, or an error that lists what there is.
pub fn find<'a>(
    exercises: &'a [Exercise],
    chapter: &str,
    name: &str,
) -> Result<&'a Exercise, String> {
    if let Some(found) = exercises
        .iter()
        .find(|e| e.chapter == chapter && e.name == name)
    {
        return Ok(found);
    }
    let in_chapter: Vec<&str> = exercises
        .iter()
        .filter(|e| e.chapter == chapter)
        .map(|e| e.name.as_str())
        .collect();
    if in_chapter.is_empty() {
        let mut chapters: Vec<&str> =
            exercises.iter().map(|e| e.chapter.as_str()).collect();
        chapters.dedup();
        Err(format!(
            "no chapter named {chapter:?}; the chapters are: {}",
            chapters.join(", ")
        ))
    } else {
        Err(format!(
            "no exercise named {name:?} in {chapter}; it has: {}",
            in_chapter.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stub_is_the_file_the_summary_names() {
        let summary = "Write `causal_mask` in `exercises/mask.rs`.\nTest: `cargo test -p ch05-causal --features exercise causal_mask`";
        assert_eq!(stub_file(summary), Some("exercises/mask.rs"));
        assert_eq!(
            stub_file("Write `a` and `b` in `exercises/all_at_once.rs`."),
            Some("exercises/all_at_once.rs")
        );
        assert_eq!(stub_file("Write `a` somewhere."), None);
        assert_eq!(
            stub_file("In `exercises/causal_tiles.wgsl`: the tile skip."),
            Some("exercises/causal_tiles.wgsl")
        );
    }

    #[test]
    fn every_exercise_of_the_course_is_found_with_its_file() {
        let root =
            find_root(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("workspace root");
        let exercises = all_exercises(&root).expect("exercises");
        assert!(exercises.len() >= 36, "{} exercises", exercises.len());
        for exercise in &exercises {
            assert!(
                root.join(&exercise.stub).is_file(),
                "{exercise}: {:?}",
                exercise.stub
            );
            assert_eq!(exercise.hints.len(), 3, "{exercise}");
        }
        // Book order: chapter 1 first, chapters never interleave.
        assert!(exercises[0].chapter.starts_with("ch01-"));
        let mut chapters: Vec<&str> =
            exercises.iter().map(|e| e.chapter.as_str()).collect();
        chapters.dedup();
        let mut sorted = chapters.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(chapters, sorted);
        let mask =
            find(&exercises, "ch05-causal", "causal_mask").expect("causal_mask");
        assert_eq!(
            mask.stub,
            Path::new("chapters/ch05-causal/exercises/mask.rs")
        );
        assert!(
            find(&exercises, "ch05-causal", "nope")
                .unwrap_err()
                .contains("causal_mask")
        );
        assert!(
            find(&exercises, "ch99", "x")
                .unwrap_err()
                .contains("ch05-causal")
        );
    }
}
