//! The chapter's output, checked against PyTorch, within one unit of the last printed
//! digit (a GPU rounds in its own order, and its `exp` is not PyTorch's), all other text
//! exactly:
//! - with the chapter's seed it matches `reference/expected/ch21-webgpu.txt`;
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it matches
//!   `reference/expected/seeds/ch21-webgpu.seed-S.txt`;
//! - on lavapipe, the software GPU CI runs, it equals the insta snapshots of every step (what the book includes); another adapter may differ from
//!   them in a last digit, and is checked against PyTorch only.

mod common;

use ch21_webgpu::narrative::narrative;
use course::Seed;
use course::printed::compare;

const PYTORCH: &str = include_str!("../../../reference/expected/ch21-webgpu.txt");

#[test]
fn output_matches_pytorch() {
    if common::gpu().is_none() {
        return;
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    if let Err(difference) = compare(&story.to_string(), PYTORCH) {
        panic!("the output differs from PyTorch's: {difference}");
    }
}

#[test]
fn output_matches_pytorch_for_other_seeds() {
    if common::gpu().is_none() {
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let chapter = env!("CARGO_PKG_NAME");
    for (seed, pytorch) in course::narrative::seed_references(&root, chapter) {
        let story = narrative(Seed::given(seed)).expect("the chapter runs");
        if let Err(difference) = compare(&story.to_string(), &pytorch) {
            panic!("--seed {seed}: the output differs from PyTorch's: {difference}");
        }
    }
}

#[test]
fn output_snapshots() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    if !common::is_lavapipe(gpu) {
        eprintln!(
            "snapshots not compared: they are lavapipe's, this is {}",
            gpu.description()
        );
        return;
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
