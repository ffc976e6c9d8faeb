//! A chapter's exercises and their hints, read from its `exercises/hints.md`: one `## name`
//! section per exercise with three `### ` tiers (the idea, the shapes, the API), shown one
//! at a time so a learner takes only as much help as they needs. `learn` shows them, and the
//! exercise contract checks every chapter has them.

/// One exercise as `exercises/hints.md` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exercise {
    /// The name after `## ` (also the name of its tests).
    pub name: String,
    /// The lines between the name and the first hint: where the stub is, how to test it.
    pub summary: String,
    /// The hints in order, each `(title, text)`.
    pub hints: Vec<(String, String)>,
}

/// Reads the exercises out of a chapter's `hints.md`.
pub fn parse_hints(markdown: &str) -> Vec<Exercise> {
    let mut exercises: Vec<Exercise> = Vec::new();
    // Anchor comments mark the hints for the book's includes; they are not hint text.
    for line in markdown.lines().filter(|l| !l.contains("ANCHOR")) {
        if let Some(name) = line.strip_prefix("## ") {
            exercises.push(Exercise {
                name: name.trim().to_string(),
                summary: String::new(),
                hints: Vec::new(),
            });
        } else if let Some(exercise) = exercises.last_mut() {
            if let Some(title) = line.strip_prefix("### ") {
                exercise
                    .hints
                    .push((title.trim().to_string(), String::new()));
            } else {
                let text = match exercise.hints.last_mut() {
                    Some((_, text)) => text,
                    None => &mut exercise.summary,
                };
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    for exercise in &mut exercises {
        exercise.summary = exercise.summary.trim().to_string();
        for (_, text) in &mut exercise.hints {
            *text = text.trim().to_string();
        }
    }
    exercises
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exercises_and_tiers() {
        let md = "# Exercises\n\n## causal_mask\nIn `exercises/mask.rs`.\n\n### The idea\nHide the future.\n\n### The shapes\n`[n, n]`\n";
        let exercises = parse_hints(md);
        assert_eq!(exercises.len(), 1);
        assert_eq!(exercises[0].name, "causal_mask");
        assert_eq!(exercises[0].summary, "In `exercises/mask.rs`.");
        assert_eq!(
            exercises[0].hints,
            vec![
                ("The idea".to_string(), "Hide the future.".to_string()),
                ("The shapes".to_string(), "`[n, n]`".to_string())
            ]
        );
    }
}
