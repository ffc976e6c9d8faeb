//! `cargo run -p ch16-flex-attention`: eight attention variants, each a score_mod and a
//! mask_mod, their block masks and their outputs; then the gradients of four of them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch16_flex_attention::narrative::narrative)
}
