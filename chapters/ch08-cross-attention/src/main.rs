//! `cargo run -p ch08-cross-attention`: prints the chapter's steps as the articles print
//! them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch08_cross_attention::narrative::narrative)
}
