//! Every public fixture made by real PyTorch 2.13.0 must pass.

use workspace_tests::parity::run_fixture_text;

fn check(file: &str, expected_cases: usize) {
    let path = format!("{}/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture file");
    let report = run_fixture_text(&text).expect("a fixture file in a known format");
    for f in &report.failures {
        eprintln!(
            "FAIL {}\n  expected: {:?}\n  got:      {:?}",
            f.name, f.expected, f.got
        );
    }
    assert!(
        report.failures.is_empty(),
        "{} of {file} failed",
        report.failures.len()
    );
    assert_eq!(report.passed, expected_cases);
}

#[test]
fn print_fixtures_match_pytorch() {
    check("print_fixtures_public.json", 320);
}

#[test]
fn rng_fixtures_match_pytorch() {
    check("rng_fixtures_public.json", 150);
}

#[test]
fn edge_fixtures_match_pytorch() {
    check("edge_fixtures.json", 466);
}
