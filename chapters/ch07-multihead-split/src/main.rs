//! `cargo run -p ch07-multihead-split`: prints the chapter's steps as the articles print
//! them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch07_multihead_split::narrative::narrative)
}
