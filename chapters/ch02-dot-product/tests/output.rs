//! The chapter's output, checked against PyTorch:
//! - with the articles' seeds it equals what the PyTorch reference script printed,
//!   `reference/expected/ch02-dot-product.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch02-dot-product.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch02_dot_product::narrative::narrative,
    include_str!("../../../reference/expected/ch02-dot-product.txt")
);
