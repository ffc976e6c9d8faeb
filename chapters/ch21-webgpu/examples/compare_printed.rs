//! `cargo run -p ch21-webgpu --example compare_printed -- OURS PYTORCH`: compares two printed
//! outputs within one unit of the last printed digit, all other text exactly (the
//! comparison of the chapter's output test, for `scripts/check-seeds.sh`). Exits 1 and
//! prints the first difference if they differ.

#[path = "../tests/common/printed.rs"]
mod printed;

use std::process::ExitCode;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [ours, pytorch] = paths.as_slice() else {
        eprintln!("usage: compare_printed OURS PYTORCH");
        return ExitCode::FAILURE;
    };
    let read = |path: &String| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
    };
    match printed::within_one_unit_of_last_digit(&read(ours), &read(pytorch)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(difference) => {
            println!("{difference}");
            ExitCode::FAILURE
        }
    }
}
