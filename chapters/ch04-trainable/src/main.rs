//! `cargo run -p ch04-trainable`: prints the chapter's steps as the articles print them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch04_trainable::narrative::narrative)
}
