//! Every chapter's printed story, as its binary prints it.

use course::{Narrative, Seed};

/// The chapters the panels run, with their numbers and package names, as `cargo run -p`
/// takes them.
pub const PACKAGES: [(u32, &str); 19] = [
    (1, "ch01-embeddings"),
    (2, "ch02-dot-product"),
    (3, "ch03-softmax"),
    (4, "ch04-trainable"),
    (5, "ch05-causal"),
    (6, "ch06-multihead-wrapper"),
    (7, "ch07-multihead-split"),
    (8, "ch08-cross-attention"),
    (9, "ch09-flash-attention"),
    (10, "ch10-backward"),
    (11, "ch11-training"),
    (12, "ch12-positions"),
    (13, "ch13-block"),
    (14, "ch14-generation"),
    (15, "ch15-modern-layer"),
    (16, "ch16-flex-attention"),
    (17, "ch17-inference"),
    (18, "ch18-linear-attention"),
    (19, "ch19-induction-heads"),
];

/// What `cargo run -p chNN-… [-- --seed S]` prints for chapter `chapter`: `seed` is
/// `--seed`, `None` for the articles' seeds.
///
/// Chapter 19 reads its saved training run for its own seed; any other seed trains the
/// model for thousands of steps, which is for `cargo run --release`, not for a page: the
/// answer is then a message saying so, with the command.
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
        16 => ch16_flex_attention::narrative::narrative,
        17 => ch17_inference::narrative::narrative,
        18 => ch18_linear_attention::narrative::narrative,
        19 => {
            use ch19_induction_heads::runs::{SEED, STEPS};
            if let Some(seed) = seed.filter(|&s| s != SEED) {
                return Err(format!(
                    "--seed {seed} trains the chapter's model from the start ({STEPS} steps):\n\
                     too long a job for a page. Run it on your machine:\n\n    \
                     cargo run --release -p ch19-induction-heads -- --seed {seed}\n\n\
                     Without a seed, or with the chapter's own seed {SEED}, the panel reads\n\
                     the saved training run and prints at once."
                ));
            }
            ch19_induction_heads::narrative::narrative
        }
        _ => {
            return Err(format!(
                "there is no chapter {chapter} to run here: the chapters are 1 to 19"
            ));
        }
    };
    narrative(Seed::from(seed))
        .map(|story| story.to_string())
        .map_err(|error| format!("error: {error}"))
}
