//! The chapter's output, checked against PyTorch:
//! - with the chapter's seeds it equals what the PyTorch reference script printed,
//!   `reference/expected/ch12-positions.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch12-positions.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch12_positions::narrative::narrative,
    include_str!("../../../reference/expected/ch12-positions.txt")
);
