//! `cargo run -p ch14-generation`: greedy decoding with and without a KV cache, grouped-query
//! attention and a sliding window, printed step by step.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch14_generation::narrative::narrative)
}
