//! The chapter's output, checked against PyTorch:
//! - with the articles' seeds it equals what the PyTorch reference script printed,
//!   `reference/expected/ch03-softmax.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch03-softmax.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch03_softmax::narrative::narrative,
    include_str!("../../../reference/expected/ch03-softmax.txt")
);
