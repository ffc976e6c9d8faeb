//! The chapter's output, checked against PyTorch + PEFT:
//! - with the default seed it equals what the reference script printed,
//!   `reference/expected/ch23-lora.txt`;
//! - with each seed the chapter's `chapter.toml` lists, it equals what the script
//!   printed with `--seed S`;
//! - it matches the insta snapshots of every step.
//!
//! Everything runs on chapter 20's tiny checkpoint, which the workspace holds.

course::chapter_output_tests!(
    ch23_lora::narrative::narrative,
    include_str!("../../../reference/expected/ch23-lora.txt")
);
