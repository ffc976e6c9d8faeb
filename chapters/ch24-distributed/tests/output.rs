//! The chapter's output, checked against PyTorch:
//! - by default it equals what the PyTorch reference script printed,
//!   `reference/expected/ch24-distributed.txt`;
//! - with each seed the chapter's `chapter.toml` lists, it equals what the script printed
//!   with `--seed S`, `reference/expected/seeds/ch24-distributed.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key the book includes).

course::chapter_output_tests!(
    ch24_distributed::narrative::narrative,
    include_str!("../../../reference/expected/ch24-distributed.txt")
);
