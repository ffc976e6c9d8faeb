//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch10-backward.txt`, exactly (on libtorch on an AMD processor, what it
//!   printed there, `reference/expected/amd/ch10-backward.txt`);
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`, `reference/expected/seeds/ch10-backward.seed-S.txt`,
//!   exactly;
//! - it matches the insta snapshots of the whole output and of every step (the answer key
//!   the book includes).

use ch10_backward::narrative::narrative;
use course::Seed;
use course::narrative::{processor_variant, seed_references};

const PYTORCH: &str = include_str!("../../../reference/expected/ch10-backward.txt");

/// What PyTorch prints on the processor the numbers are computed on (see
/// `course::narrative::processor_variant`): the committed text, except on libtorch on an
/// AMD processor.
fn pytorch_here() -> Option<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    processor_variant(&root, env!("CARGO_PKG_NAME"))
}

#[test]
fn output_equals_pytorch() {
    let ours = narrative(Seed::ARTICLES)
        .expect("the chapter runs")
        .to_string();
    assert_eq!(ours, pytorch_here().as_deref().unwrap_or(PYTORCH));
}

#[test]
fn output_equals_pytorch_for_other_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = seed_references(&root, env!("CARGO_PKG_NAME"));
    assert_eq!(seeds.len(), 2, "two committed seeds");
    for (seed, pytorch) in seeds {
        let story = narrative(Seed::given(seed)).expect("the chapter runs");
        assert_eq!(story.to_string(), pytorch, "ch10-backward --seed {seed}");
    }
}

#[test]
fn output_snapshots() {
    if pytorch_here().is_some() {
        // The snapshots are the answer key the book includes, PyTorch's digits on the Intel
        // processor; libtorch on this processor prints another digit (checked above).
        eprintln!("skipped: libtorch on this processor prints its own MKL's digits");
        return;
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    insta::assert_snapshot!("output", story.to_string());
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
