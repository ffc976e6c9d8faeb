//! The chapter's whole output, and each step's, against the accepted insta snapshots (the
//! book shows them). It needs the model file: without it the test passes with a message,
//! unless `ATTN_REQUIRE_MODEL=1` (as in CI). The numbers of transformers it prints beside
//! ours are read from `fixtures/real/`, which `tests/real.rs` checks against our own.

use ch20_real_model::loader::{default_model_path, how_to_get_it};
use ch20_real_model::narrative::narrative;
use course::narrative::Seed;

#[test]
fn output_snapshots() {
    let path = default_model_path();
    if !path.exists() {
        if std::env::var("ATTN_REQUIRE_MODEL").is_ok_and(|v| v == "1") {
            panic!("ATTN_REQUIRE_MODEL=1: {}", how_to_get_it(&path));
        }
        eprintln!("skipped: {}", how_to_get_it(&path));
        return;
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    insta::assert_snapshot!("output", story.to_string());
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
