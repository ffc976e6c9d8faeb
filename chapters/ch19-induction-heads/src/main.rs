//! `cargo run -p ch19-induction-heads`: trains the chapter's model and prints the steps as
//! the PyTorch reference script prints them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(
        ch19_induction_heads::narrative::narrative,
        ch19_induction_heads::HINTS,
    )
}
