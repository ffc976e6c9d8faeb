//! `cargo run -p ch17-inference`: a paged KV cache shared between requests, speculative
//! decoding, and the cache of multi-head latent attention.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch17_inference::narrative::narrative)
}
