//! `cargo run -p ch11-training`: trains the chapter's model and prints the steps as the
//! PyTorch reference script prints them. `-- --steps N` trains longer, with a progress bar
//! on the terminal (stderr only, so it never mixes with the printed text).

fn main() -> std::process::ExitCode {
    course::cli::chapter_main_with(ch11_training::narrative::run)
}
