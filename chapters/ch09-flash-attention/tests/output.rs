//! The chapter's output, checked three ways: it equals what the PyTorch reference script
//! printed (`reference/expected/ch09-flash-attention.txt`), and it matches the insta
//! snapshots of the whole output and of every step (the answer key the book includes).

use ch09_flash_attention::narrative::narrative;

const PYTORCH: &str = include_str!("../../../reference/expected/ch09-flash-attention.txt");

#[test]
fn output_equals_pytorch() {
    let story = narrative().expect("the chapter runs");
    assert_eq!(story.to_string(), PYTORCH);
}

#[test]
fn output_snapshots() {
    let story = narrative().expect("the chapter runs");
    insta::assert_snapshot!("output", story.to_string());
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
