//! `cargo run -p ch22-pretraining`: the text and its baselines, the two tokenizers side by
//! side, the two models' card, a short run of each and a sample of the trained model, as
//! the PyTorch reference script prints them; `--train` (or `--long`) trains a model for
//! minutes instead, and `--save DIR`, `--checkpoint DIR`, `--resume DIR` a run whose model
//! is saved for the Hugging Face ecosystem, or kept and continued (see `--help`). Needs the
//! text first: `bash scripts/get-shakespeare.sh`.

fn main() -> std::process::ExitCode {
    use ch22_pretraining::cli;
    use course::process;
    process::keep_freed_memory();
    process::on_pool_thread(|| course::cli::chapter_main_with(cli::main))
}
