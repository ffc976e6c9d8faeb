//! `cargo run -p ch18-linear-attention`: linear attention in three forms, the delta rule and
//! Gated DeltaNet, each equal to its PyTorch reference.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch18_linear_attention::narrative::narrative)
}
