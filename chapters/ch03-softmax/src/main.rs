//! `cargo run -p ch03-softmax`: prints the chapter's steps as the articles print them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch03_softmax::narrative::narrative)
}
