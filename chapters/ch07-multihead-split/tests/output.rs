//! The chapter's output, checked against PyTorch:
//! - with the articles' seeds it equals what the PyTorch reference script printed,
//!   `reference/expected/ch07-multihead-split.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch07-multihead-split.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch07_multihead_split::narrative::narrative,
    include_str!("../../../reference/expected/ch07-multihead-split.txt")
);
