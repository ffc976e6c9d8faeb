//! The chapter's output, checked against PyTorch: it equals what the PyTorch reference
//! script printed (`reference/expected/ch09-flash-attention.txt`), and it matches the insta
//! snapshots of the whole output and of every step (the answer key the book includes).

shared::chapter_output_tests!(
    ch09_flash_attention::narrative::narrative,
    include_str!("../../../reference/expected/ch09-flash-attention.txt")
);
