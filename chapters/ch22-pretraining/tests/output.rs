//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch22-pretraining.txt`;
//! - with each seed the chapter's `chapter.toml` lists, it equals what the script
//!   printed with `--seed S`;
//! - it matches the insta snapshots of every step.
//!
//! They need the text: without it the tests pass with a message, unless
//! `ATTN_REQUIRE_DATA=1` (as in CI).

mod common;

course::chapter_output_tests!(
    ch22_pretraining::narrative::narrative,
    include_str!("../../../reference/expected/ch22-pretraining.txt"),
    runs_if = common::data_is_here
);
