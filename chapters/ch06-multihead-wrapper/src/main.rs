//! `cargo run -p ch06-multihead-wrapper`: prints the chapter's steps as the articles print
//! them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch06_multihead_wrapper::narrative::narrative)
}
