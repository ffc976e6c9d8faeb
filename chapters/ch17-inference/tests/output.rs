//! The chapter's output, checked against PyTorch:
//! - by default it equals what the PyTorch reference script printed,
//!   `reference/expected/ch17-inference.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch17-inference.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch17_inference::narrative::narrative,
    include_str!("../../../reference/expected/ch17-inference.txt")
);
