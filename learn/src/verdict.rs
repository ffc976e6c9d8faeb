//! Reading the test harness's output: which tests passed, which failed and why, and the
//! short verdict a learner sees for one exercise.
//!
//! The tests run with `--format pretty` (one `test NAME ... ok` line per test) and
//! `RUST_BACKTRACE=0`. A failing test's captured output sits between `---- NAME stdout ----`
//! and the next such header: one `thread 'NAME' panicked at FILE:LINE:COL:` line followed by
//! the message, per panic. A property test panics once per input it tries while shrinking,
//! then once more with proptest's own summary ("Test failed: …; minimal failing input: …"):
//! that last one is the one worth showing.

use std::collections::BTreeMap;
use std::fmt;

/// The message `todo!()` panics with: the stub was not written yet.
const TODO: &str = "not yet implemented";

/// How one test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestResult {
    Passed,
    /// It failed; the panic message worth showing, with where it was raised.
    Failed(Panic),
}

/// One panic of a failing test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panic {
    /// `file:line:col` where it panicked.
    pub location: String,
    /// The panic's message (several lines for `assert_eq!` and proptest).
    pub message: String,
}

/// What a run of a chapter's exercise tests told us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Run {
    /// The chapter (with the learner's stubs) did not compile: the first error, a few lines.
    DoesNotCompile(String),
    /// The tests ran: each test's name and result.
    Tested(BTreeMap<String, TestResult>),
}

/// The verdict on one exercise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// Its code still reaches `todo!()`.
    NotStarted,
    /// A check failed: the first failing test and its panic.
    Failed {
        test: String,
        panic: Panic,
    },
    /// The chapter does not compile with the learner's code.
    DoesNotCompile(String),
    /// No test of the exercise ran (a name that matches no test).
    NoTests,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        *self == Verdict::Passed
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Passed => write!(f, "passed"),
            Verdict::NotStarted => {
                write!(f, "not started (the code still reaches todo!())")
            }
            Verdict::Failed { test, panic } => {
                writeln!(f, "failed: {test}, at {}", panic.location)?;
                for line in panic.message.lines() {
                    writeln!(f, "  {line}")?;
                }
                if let Some(pictures) = crate::heatmap::heatmaps(&panic.message) {
                    for line in pictures.lines() {
                        writeln!(f, "  {line}")?;
                    }
                }
                Ok(())
            }
            Verdict::DoesNotCompile(error) => {
                writeln!(f, "does not compile:")?;
                for line in error.lines() {
                    writeln!(f, "  {line}")?;
                }
                Ok(())
            }
            Verdict::NoTests => {
                write!(f, "no test ran (is the exercise's name right?)")
            }
        }
    }
}

/// Reads a run of `cargo test … -- --format pretty` from its stdout and stderr.
pub fn parse_run(stdout: &str, stderr: &str) -> Run {
    if !stdout.lines().any(|l| l.starts_with("running ")) {
        return Run::DoesNotCompile(first_compile_error(stderr));
    }
    let mut results = BTreeMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        if let Some(name) = rest.strip_suffix(" ... ok") {
            results.insert(name.to_string(), TestResult::Passed);
        } else if let Some(name) = rest.strip_suffix(" ... FAILED") {
            let panic = panic_of(stdout, name).unwrap_or_else(|| Panic {
                location: "?".to_string(),
                message: "(no panic message)".to_string(),
            });
            results.insert(name.to_string(), TestResult::Failed(panic));
        }
    }
    Run::Tested(results)
}

/// The panic worth showing from a failing test's captured output: proptest's summary if
/// there is one (it carries the minimal failing input), else the first panic.
fn panic_of(stdout: &str, test: &str) -> Option<Panic> {
    let header = format!("---- {test} stdout ----");
    let start = stdout.find(&header)? + header.len();
    let section = &stdout[start..];
    // The section ends at the next test's header, or at the list of failures.
    let end = ["\n---- ", "\nfailures:\n"]
        .iter()
        .filter_map(|marker| section.find(marker))
        .min()
        .unwrap_or(section.len());
    let panics = panics_in(&section[..end]);
    panics
        .iter()
        .rev()
        .find(|p| p.message.starts_with("Test failed:"))
        .or(panics.first())
        .cloned()
}

/// Every panic in a test's captured output, in order.
fn panics_in(section: &str) -> Vec<Panic> {
    let mut panics: Vec<Panic> = Vec::new();
    for line in section.lines() {
        // `thread 'NAME' panicked at …`, or `thread 'NAME' (ID) panicked at …` since Rust 1.92.
        let at = line
            .starts_with("thread '")
            .then(|| line.split_once(" panicked at "))
            .flatten();
        if let Some((_, location)) = at {
            let location = location.trim_end_matches(':').to_string();
            panics.push(Panic {
                location,
                message: String::new(),
            });
        } else if line.starts_with("note: run with `RUST_BACKTRACE")
            || line.starts_with("proptest: ")
            || line.starts_with('\t')
        {
            // The backtrace note, proptest's notes, and its counts (`\tsuccesses: 0`).
            continue;
        } else if let Some(panic) = panics.last_mut() {
            panic.message.push_str(line);
            panic.message.push('\n');
        }
    }
    for panic in &mut panics {
        panic.message = panic.message.trim().to_string();
    }
    panics
}

/// The first `error…` block of cargo's output, at most a dozen lines.
fn first_compile_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("error")) else {
        return stderr.trim().to_string();
    };
    lines[start..]
        .iter()
        .skip(1)
        .position(|l| {
            l.is_empty() || l.starts_with("error") || l.starts_with("warning")
        })
        .map_or(&lines[start..], |len| &lines[start..=start + len])
        .iter()
        .take(12)
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The verdict on the exercise whose tests start with `prefix` (`exercise_NAME`), in a run.
pub fn verdict(run: &Run, prefix: &str) -> Verdict {
    let results = match run {
        Run::DoesNotCompile(error) => return Verdict::DoesNotCompile(error.clone()),
        Run::Tested(results) => results,
    };
    let mine: Vec<(&String, &TestResult)> = results
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    if mine.is_empty() {
        return Verdict::NoTests;
    }
    let failures: Vec<(&String, &Panic)> = mine
        .iter()
        .filter_map(|(name, result)| match result {
            TestResult::Failed(panic) => Some((*name, panic)),
            TestResult::Passed => None,
        })
        .collect();
    if failures.is_empty() {
        return Verdict::Passed;
    }
    // A real failure says more than a function still left to write.
    match failures
        .iter()
        .find(|(_, panic)| !panic.message.contains(TODO))
    {
        Some((test, panic)) => Verdict::Failed {
            test: test.to_string(),
            panic: (*panic).clone(),
        },
        None => Verdict::NotStarted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run of chapter 2's exercise tests (trimmed to at most three panics per test)
    /// where `attention_scores` returns twice the right scores and the other exercises are
    /// untouched stubs.
    const WRONG_SCORES: &str = include_str!("samples/ch02_wrong_scores.stdout.txt");

    #[test]
    fn every_test_is_read_with_its_result() {
        let Run::Tested(results) = parse_run(WRONG_SCORES, "") else {
            panic!("the sample is a test run");
        };
        assert_eq!(results.len(), 8);
        assert!(results.values().all(|r| matches!(r, TestResult::Failed(_))));
    }

    #[test]
    fn a_wrong_value_shows_the_first_failing_check_with_expected_and_actual() {
        let run = parse_run(WRONG_SCORES, "");
        let Verdict::Failed { test, panic } =
            verdict(&run, "exercise_attention_scores")
        else {
            panic!("attention_scores fails");
        };
        // The check against PyTorch's digits sorts first, before the property test.
        assert_eq!(test, "exercise_attention_scores");
        assert_eq!(
            panic.location,
            "chapters/ch02-dot-product/tests/exercises.rs:53:5"
        );
        assert_eq!(
            panic.message,
            "assertion `left == right` failed\n  left: \"tensor([1.9088, 2.9900, 2.9508, 1.6868, 1.4140, 2.1730])\"\n right: \"tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])\""
        );
    }

    #[test]
    fn a_property_test_shows_its_minimal_failing_input_once() {
        let run = parse_run(WRONG_SCORES, "");
        let Verdict::Failed { panic, .. } =
            verdict(&run, "exercise_attention_scores_are_dot_products")
        else {
            panic!("the property fails");
        };
        assert!(
            panic
                .message
                .starts_with("Test failed: tensors are not close"),
            "{}",
            panic.message
        );
        assert!(
            panic.message.contains(
                "minimal failing input: (inputs, query) = (\n    tensor([[-0.2642]]),"
            ),
            "{}",
            panic.message
        );
        assert_eq!(
            panic.message.matches("not close").count(),
            1,
            "{}",
            panic.message
        );
        assert!(!panic.message.contains("successes"), "{}", panic.message);
        assert!(!panic.message.contains("proptest:"), "{}", panic.message);
    }

    #[test]
    fn todo_is_not_started_and_unknown_names_have_no_tests() {
        let run = parse_run(WRONG_SCORES, "");
        assert_eq!(
            verdict(&run, "exercise_context_vector"),
            Verdict::NotStarted
        );
        assert_eq!(verdict(&run, "exercise_all_at_once"), Verdict::NotStarted);
        assert_eq!(verdict(&run, "exercise_softmax"), Verdict::NoTests);
        let display = verdict(&run, "exercise_attention_scores").to_string();
        assert!(
            display.starts_with("failed: exercise_attention_scores, at chapters/"),
            "{display}"
        );
        assert!(!display.contains("RUST_BACKTRACE"), "{display}");
    }

    #[test]
    fn all_ok_is_passed() {
        let stdout = "\nrunning 2 tests\ntest exercise_exp_a ... ok\ntest exercise_exp_b ... ok\n\ntest result: ok. 2 passed; 0 failed\n";
        let run = parse_run(stdout, "");
        assert_eq!(verdict(&run, "exercise_exp"), Verdict::Passed);
        assert!(verdict(&run, "exercise_exp").passed());
    }

    #[test]
    fn a_build_error_is_not_a_test_result() {
        let stderr = "error[E0308]: mismatched types\n --> chapters/ch02-dot-product/exercises/scores.rs:9:5\n  |\n9 |     1\n  |     ^ expected `Tensor`, found integer\n\nerror: could not compile `ch02-dot-product` (lib) due to 1 previous error\n";
        let run = parse_run("", stderr);
        let Verdict::DoesNotCompile(error) = verdict(&run, "exercise_x") else {
            panic!("{run:?}");
        };
        assert!(
            error.starts_with("error[E0308]: mismatched types"),
            "{error}"
        );
        assert!(
            error.contains("expected `Tensor`, found integer"),
            "{error}"
        );
        assert!(!error.contains("could not compile"), "{error}");
    }
}
