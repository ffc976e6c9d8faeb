//! The chapter's output, checked against PyTorch: it equals what the PyTorch reference
//! script printed (`reference/expected/ch08-cross-attention.txt`), and it matches the insta snapshots of the
//! whole output and of every step (the answer key the book includes).

shared::chapter_output_tests!(
    ch08_cross_attention::narrative::narrative,
    include_str!("../../../reference/expected/ch08-cross-attention.txt")
);
