//! Compares two printed outputs the way the tests do off the reference platform: the same
//! text, every measured number within one unit of its last printed digit (see
//! `course::printed`).
//!
//! ```sh
//! cargo run -q -p course --bin compare-printed -- ours.txt pytorch.txt
//! ```
//!
//! Prints how many numbers differ and exits 0 when they agree; otherwise prints the first
//! difference and exits 1.

use std::process::ExitCode;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [ours, pytorch] = paths.as_slice() else {
        eprintln!("usage: compare-printed OURS.txt PYTORCH.txt");
        return ExitCode::from(2);
    };
    let read = |path: &String| {
        std::fs::read_to_string(path)
            .map_err(|e| format!("compare-printed: {path}: {e}"))
    };
    let (ours, pytorch) = match (read(ours), read(pytorch)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match course::printed::compare(&ours, &pytorch) {
        Ok(agreement) => {
            println!("{agreement}");
            ExitCode::SUCCESS
        }
        Err(difference) => {
            println!("{difference}");
            ExitCode::FAILURE
        }
    }
}
