//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch10-backward.txt`, exactly;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`, `reference/expected/seeds/ch10-backward.seed-S.txt`,
//!   exactly;
//! - it matches the insta snapshots of the whole output and of every step (the answer key
//!   the book includes).

use ch10_backward::narrative::narrative;
use course::Seed;
use course::narrative::seed_references;

const PYTORCH: &str = include_str!("../../../reference/expected/ch10-backward.txt");

#[test]
fn output_equals_pytorch() {
    let ours = narrative(Seed::ARTICLES)
        .expect("the chapter runs")
        .to_string();
    assert_eq!(ours, PYTORCH);
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
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    insta::assert_snapshot!("output", story.to_string());
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
