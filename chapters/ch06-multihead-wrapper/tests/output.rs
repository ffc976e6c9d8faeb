//! The chapter's output, checked against PyTorch: it equals what the PyTorch reference
//! script printed (`reference/expected/ch06-multihead-wrapper.txt`), and it matches the insta snapshots of the
//! whole output and of every step (the answer key the book includes).

shared::chapter_output_tests!(
    ch06_multihead_wrapper::narrative::narrative,
    include_str!("../../../reference/expected/ch06-multihead-wrapper.txt")
);
