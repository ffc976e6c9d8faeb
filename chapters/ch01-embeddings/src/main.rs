//! `cargo run -p ch01-embeddings`: prints the chapter's steps as the articles print them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch01_embeddings::narrative::narrative)
}
