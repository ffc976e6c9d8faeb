//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch13-block.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`, `reference/expected/seeds/ch13-block.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch13_block::narrative::narrative,
    include_str!("../../../reference/expected/ch13-block.txt")
);
