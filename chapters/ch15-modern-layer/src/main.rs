//! `cargo run -p ch15-modern-layer`: the pieces of a 2026 decoder layer, one at a time,
//! then a tiny model of such layers decoding with a KV cache.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch15_modern_layer::narrative::narrative)
}
