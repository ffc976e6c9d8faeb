//! The chapter's output, checked against PyTorch:
//! - with the default seed (read from the saved run) it equals what the PyTorch reference
//!   script printed, `reference/expected/ch19-induction-heads.txt`;
//! - with each seed the chapter's `chapter.toml` lists (trained here,
//!   both runs), it equals what the script printed with `--seed S`;
//! - it matches the insta snapshots of the whole output and of every step.

course::chapter_output_tests!(
    ch19_induction_heads::narrative::narrative,
    include_str!("../../../reference/expected/ch19-induction-heads.txt")
);
