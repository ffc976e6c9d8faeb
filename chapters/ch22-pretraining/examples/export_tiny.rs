//! `cargo run -p ch22-pretraining --example export_tiny -- DIR [SEED]`: trains the small
//! model of the export's tests (`tests/common/tiny_export.rs`) and saves it into DIR in
//! the Hugging Face Hub's layout, for `reference/ch22_export_check.py` to read with
//! transformers.

#[path = "../tests/common/tiny_export.rs"]
mod tiny_export;

use std::path::PathBuf;
use std::process::ExitCode;

use ch22_pretraining::export::save_hub;
use ch22_pretraining::tokenizer_json::to_tokenizer;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: export_tiny DIR [SEED]");
        return ExitCode::FAILURE;
    };
    let seed = match args.next().map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(seed)) => seed,
        Some(Err(e)) => {
            eprintln!("error: SEED: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (model, config, bpe) = tiny_export::trained(seed, tiny_export::STEPS);
    let saved = to_tokenizer(&bpe).and_then(|t| save_hub(&dir, &model, &config, &t));
    match saved {
        Ok(paths) => {
            for path in paths {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
