//! `cargo run -p ch12-positions`: prints the chapter's steps as the reference script does.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch12_positions::narrative::narrative)
}
