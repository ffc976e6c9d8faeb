//! What the tests that read the text share.

use ch22_pretraining::data::{default_path, how_to_get_it};

/// Whether the text is here (`bash scripts/get-shakespeare.sh`); without it a test
/// passes with a message, or fails when `ATTN_REQUIRE_DATA=1` (as in CI).
pub fn data_is_here() -> bool {
    let path = default_path();
    if path.exists() {
        return true;
    }
    if std::env::var("ATTN_REQUIRE_DATA").is_ok_and(|v| v == "1") {
        panic!("ATTN_REQUIRE_DATA=1: {}", how_to_get_it(&path));
    }
    eprintln!("skipped: {}", how_to_get_it(&path));
    false
}
