//! `cargo run -p ch13-block`: prints the chapter's steps as the reference script prints
//! them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch13_block::narrative::narrative)
}
