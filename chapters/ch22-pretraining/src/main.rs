//! `cargo run -p ch22-pretraining`: the text and its baselines, and the two
//! tokenizers side by side, as the PyTorch reference script prints them. Needs the
//! text first: `bash scripts/get-shakespeare.sh`.

fn main() -> std::process::ExitCode {
    use ch22_pretraining::cli;
    use course::process;
    process::keep_freed_memory();
    process::on_pool_thread(|| course::cli::chapter_main_with(cli::main))
}
