//! `torch-parity FILE...`: runs PyTorch fixture files (print or rng) through `shared`,
//! prints one line per failing case and ends with `N passed, M failed`.
//! Exits with status 1 if any case failed (or a file could not be read).

use std::process::ExitCode;

use workspace_tests::parity::run_fixture_text;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: torch-parity FIXTURE.json...");
        return ExitCode::FAILURE;
    }
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let report = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|text| run_fixture_text(&text));
        match report {
            Ok(report) => {
                passed += report.passed;
                failed += report.failures.len();
                for f in &report.failures {
                    println!(
                        "FAIL {file}: {}\n  expected: {:?}\n  got:      {:?}",
                        f.name, f.expected, f.got
                    );
                }
            }
            Err(e) => {
                println!("ERROR {file}: {e}");
                failed += 1;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
