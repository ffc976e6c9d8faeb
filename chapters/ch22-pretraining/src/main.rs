//! `cargo run -p ch22-pretraining`: the text and its baselines, and the two
//! tokenizers side by side, as the PyTorch reference script prints them. Needs the
//! text first: `bash scripts/get-shakespeare.sh`.
//!
//! `-- --save DIR`, `-- --checkpoint DIR`, `-- --resume DIR`: a run whose model is saved
//! for the Hugging Face ecosystem, or kept and continued (`-- --help` lists them).

fn main() -> std::process::ExitCode {
    use ch22_pretraining::narrative;
    use ch22_pretraining::save_flags::{FileOptions, run};
    use course::process;
    process::keep_freed_memory();
    process::on_pool_thread(|| {
        course::cli::chapter_main_with(|seed, options: FileOptions| {
            if !options.is_command() {
                return narrative::narrative(seed);
            }
            // The run printed its lines as it went: there is no narrative after it.
            let code = match run(seed, &options) {
                Ok(()) => 0,
                Err(error) => {
                    eprintln!("error: {error}");
                    1
                }
            };
            std::process::exit(code)
        })
    })
}
