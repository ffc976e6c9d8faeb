//! `cargo run -p ch19-induction-heads`: trains the chapter's model and prints the steps as
//! the PyTorch reference script prints them, from the saved run (instant); `--train`
//! trains first, `--write-checkpoint PATH` also saves the run.

fn main() -> std::process::ExitCode {
    use ch19_induction_heads::narrative;
    use course::process;
    process::keep_freed_memory();
    process::on_pool_thread(|| course::cli::chapter_main_with(narrative::run))
}
