//! The chapter's output, checked against PyTorch:
//! - by default it equals what the PyTorch reference script printed,
//!   `reference/expected/ch15-modern-layer.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`,
//!   `reference/expected/seeds/ch15-modern-layer.seed-S.txt`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch15_modern_layer::narrative::narrative,
    include_str!("../../../reference/expected/ch15-modern-layer.txt")
);
