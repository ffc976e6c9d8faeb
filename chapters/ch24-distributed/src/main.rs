//! `cargo run -p ch24-distributed`: ring attention, zigzag shards, all-gather against a
//! ring pass, Ulysses and tensor-parallel heads, each rank's steps run in one process.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch24_distributed::narrative::narrative)
}
