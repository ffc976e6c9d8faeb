//! `cargo run -p ch09-flash-attention`: prints the chapter's steps as the PyTorch reference
//! script prints them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch09_flash_attention::narrative::narrative)
}
