//! Every chapter's printed story, as its binary prints it.

use course::{Narrative, Seed};

/// The chapters, 1 to 15: their package names, as `cargo run -p` takes them.
pub const PACKAGES: [&str; 15] = [
    "ch01-embeddings",
    "ch02-dot-product",
    "ch03-softmax",
    "ch04-trainable",
    "ch05-causal",
    "ch06-multihead-wrapper",
    "ch07-multihead-split",
    "ch08-cross-attention",
    "ch09-flash-attention",
    "ch10-backward",
    "ch11-training",
    "ch12-positions",
    "ch13-block",
    "ch14-generation",
    "ch15-modern-layer",
];

/// What `cargo run -p chNN-… [-- --seed S]` prints for chapter `chapter` (1 to 15):
/// `seed` is `--seed`, `None` for the articles' seeds.
pub fn story(chapter: u32, seed: Option<u64>) -> Result<String, String> {
    let narrative: fn(Seed) -> shared::Result<Narrative> = match chapter {
        1 => ch01_embeddings::narrative::narrative,
        2 => ch02_dot_product::narrative::narrative,
        3 => ch03_softmax::narrative::narrative,
        4 => ch04_trainable::narrative::narrative,
        5 => ch05_causal::narrative::narrative,
        6 => ch06_multihead_wrapper::narrative::narrative,
        7 => ch07_multihead_split::narrative::narrative,
        8 => ch08_cross_attention::narrative::narrative,
        9 => ch09_flash_attention::narrative::narrative,
        10 => ch10_backward::narrative::narrative,
        11 => ch11_training::narrative::narrative,
        12 => ch12_positions::narrative::narrative,
        13 => ch13_block::narrative::narrative,
        14 => ch14_generation::narrative::narrative,
        15 => ch15_modern_layer::narrative::narrative,
        _ => {
            return Err(format!(
                "there is no chapter {chapter}: the chapters are 1 to 15"
            ));
        }
    };
    narrative(Seed::from(seed))
        .map(|story| story.to_string())
        .map_err(|error| format!("error: {error}"))
}
