//! Property tests that fail quietly, for the exercises' tests.
//!
//! While a property test shrinks a failing input it runs the test body again and again, and
//! every run's panic is printed: a stub that still says `todo!()` fills the screen with the
//! same message. [`quiet`] makes a property test print one message when it fails: proptest's
//! own report, which names the failing check and the smallest input that fails it. It also
//! turns off proptest's failure files, so running the tests writes nothing into the
//! learner's folder.

use std::cell::Cell;
use std::sync::Once;

use proptest::test_runner::{Config, TestCaseError};

thread_local! {
    /// Whether the property test running on this thread asked for quiet panics.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

/// The configuration for `#![proptest_config(quiet(cases))]`: `cases` random inputs, no
/// failure files, and only proptest's final report printed when a check fails.
///
/// `PROPTEST_CASES=N` in the environment runs `N` inputs instead, to search harder for a
/// counterexample than the test suite's default has time for.
pub fn quiet(cases: u32) -> Config {
    HOOK.call_once(|| {
        let print = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            // proptest's report on the test's own thread starts so; the panics of the runs it
            // tries while shrinking do not.
            let report = message.starts_with("Test failed")
                || message.starts_with("Test aborted");
            if !QUIET.with(Cell::get) || report {
                print(info);
            }
        }));
    });
    // The configuration is built on the test's own thread, right before its runs.
    QUIET.with(|quiet| quiet.set(true));
    Config {
        failure_persistence: None,
        ..Config::with_cases(cases_from_env().unwrap_or(cases))
    }
}

/// `PROPTEST_CASES`, when it is set to a number.
fn cases_from_env() -> Option<u32> {
    std::env::var("PROPTEST_CASES").ok()?.parse().ok()
}

/// Fails the property test with `broken`'s message when a check found the code broken.
///
/// The exercises' checks return `Option<String>`: `None` when the code under test behaves,
/// else what went wrong (the inputs, the values, the ulps). Inside `proptest!`,
/// `holds(check(...))?` fails the case with that message, which proptest then shrinks.
pub fn holds(broken: Option<String>) -> Result<(), TestCaseError> {
    match broken {
        None => Ok(()),
        Some(message) => Err(TestCaseError::fail(message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_passes_none_and_fails_with_the_message() {
        assert!(holds(None).is_ok());
        let failure = holds(Some("2 is not 3".to_string())).unwrap_err();
        assert!(failure.to_string().contains("2 is not 3"), "{failure}");
    }
}
