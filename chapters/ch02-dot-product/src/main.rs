//! `cargo run -p ch02-dot-product`: prints the chapter's steps as the articles print them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch02_dot_product::narrative::narrative)
}
