//! `cargo run -p ch05-causal`: prints the chapter's steps as the articles print them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch05_causal::narrative::narrative)
}
