//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch11-training.txt` (every loss of the 60 steps, the accuracy and
//!   the attention weights before and after training);
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`;
//! - it matches the insta snapshot of every step (the answer key
//!   the book includes).

course::chapter_output_tests!(
    ch11_training::narrative::narrative,
    include_str!("../../../reference/expected/ch11-training.txt")
);
