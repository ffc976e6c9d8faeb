//! Conformance with PyTorch: fixture files made by real PyTorch 2.13.0 say what `print(t)`
//! shows and what the CPU generator draws; these functions run every case through `shared`
//! and report the ones that differ.
//!
//! Three formats (see `tests/fixtures/README.md`), told apart by content: a JSON list is a
//! print fixture file; an object with `cases` is an operation fixture file when its cases
//! name an `op`, else an rng fixture file.

mod ops_cases;
mod print_cases;
mod rng_cases;

use serde_json::Value;

/// One case whose result differs from PyTorch's.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The case's `name` in the fixture file.
    pub name: String,
    /// What PyTorch produced.
    pub expected: String,
    /// What `shared` produced.
    pub got: String,
}

/// The outcome of one fixture file.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases that matched.
    pub passed: usize,
    /// Cases that did not, with both results.
    pub failures: Vec<Failure>,
    /// How far the float32 values of operation fixtures are from PyTorch's bits.
    pub drift: Drift,
}

/// How many float32 values a fixture file's results hold, how many differ from PyTorch's
/// bits, and the largest difference relative to the largest magnitude of its result: all 0
/// where every value is bit for bit; within 1e-6 off the reference platform.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Drift {
    /// Values compared.
    pub values: usize,
    /// Values whose bits differ.
    pub differing: usize,
    /// The largest `|ours - PyTorch's| / max |PyTorch's|` over one result.
    pub largest_relative: f64,
}

impl Report {
    fn record(&mut self, failure: Option<Failure>) {
        match failure {
            Some(f) => self.failures.push(f),
            None => self.passed += 1,
        }
    }
}

/// Runs every case of a fixture file's JSON text.
pub fn run_fixture_text(text: &str) -> Result<Report, String> {
    let json: Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match &json {
        Value::Array(cases) => print_cases::run(cases),
        Value::Object(map) if map.contains_key("cases") => {
            match map["cases"].as_array() {
                Some(cases) if cases.iter().any(|c| c.get("op").is_some()) => {
                    ops_cases::run(map, cases)
                }
                _ => rng_cases::run(&map["cases"]),
            }
        }
        _ => Err("neither a print fixture list nor an object with `cases`".into()),
    }
}
