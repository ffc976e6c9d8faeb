//! The chapter's output, checked against PyTorch:
//! - with the articles' seeds it equals what the PyTorch reference script printed,
//!   `reference/expected/ch09-flash-attention.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch09-flash-attention.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch09_flash_attention::narrative::narrative,
    include_str!("../../../reference/expected/ch09-flash-attention.txt")
);
