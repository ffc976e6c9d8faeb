//! The chapter's whole output against transformers' text: `reference/ch20_real_model.py
//! --seed S` runs the same model file through transformers and prints what the chapter
//! prints; `reference/regenerate.sh` keeps its text for the default seed
//! (`reference/expected/ch20-real-model.txt`) and for the seeds
//! `reference/expected/seeds/SEEDS` lists. Each step is also an insta snapshot (the book
//! shows them). Compared byte for byte on the reference platform, within one unit of each
//! printed number's last digit elsewhere (`course::platform::assert_printed`).
//!
//! A whole run takes about 35 s of one core in the dev profile, so beside the default seed
//! the tests run only the first seed `SEEDS` lists, in parallel with it;
//! `scripts/check-seeds.sh` runs the others, and any seed, against the reference script.
//!
//! `--interventions` prints a text of its own, compared with
//! `reference/expected/ch20-real-model.interventions.txt` (the script's `--interventions`),
//! with a snapshot of each step for the book.
//!
//! They need the model file: without it the tests pass with a message, unless
//! `ATTN_REQUIRE_MODEL=1` (as in CI). The numbers of transformers the first-logits step
//! prints beside ours are read from `fixtures/real/`, which `tests/real.rs` checks against
//! our own.

use std::path::Path;

use ch20_real_model::loader::model_for_tests;
use ch20_real_model::narrative::{interventions, narrative};
use course::narrative::{Seed, seed_references};
use course::platform::{assert_printed, platform};

/// Whether the model file is here; a failure when it is not and `ATTN_REQUIRE_MODEL=1`.
fn model_is_here() -> bool {
    model_for_tests().is_some()
}

#[test]
fn output_equals_transformers() {
    if !model_is_here() {
        return;
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    assert_printed(
        &story.to_string(),
        include_str!("../../../reference/expected/ch20-real-model.txt"),
        env!("CARGO_PKG_NAME"),
    );
    let platform = platform();
    if !platform.is_reference() {
        // The snapshots are the reference platform's text, the book's answer key; the text
        // was compared within its digits above.
        eprintln!("snapshots skipped: {platform}");
        return;
    }
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}

#[test]
fn interventions_equal_transformers() {
    if !model_is_here() {
        return;
    }
    let story = interventions(Seed::ARTICLES).expect("the interventions run");
    assert_printed(
        &story.to_string(),
        include_str!("../../../reference/expected/ch20-real-model.interventions.txt"),
        concat!(env!("CARGO_PKG_NAME"), " --interventions"),
    );
    if !platform().is_reference() {
        return;
    }
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}

#[test]
fn output_equals_transformers_for_another_seed() {
    if !model_is_here() {
        return;
    }
    // The chapter crates live two folders below the workspace root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let chapter = env!("CARGO_PKG_NAME");
    // One seed: each is a whole run of the model (the others: scripts/check-seeds.sh).
    for (seed, transformers) in seed_references(&root, chapter).into_iter().take(1) {
        let story = narrative(Seed::given(seed)).expect("the chapter runs");
        let what = format!("{chapter} --seed {seed}");
        assert_printed(&story.to_string(), &transformers, &what);
    }
}
