//! The sentences the articles embed, kept in one place for every later chapter.

use shared::{Tensor, tensor};

/// "Your journey starts with one step": six words already embedded as 3-d vectors
/// (the blog post's hand-made example; later chapters attend over these).
///
/// # Shapes
/// Returns `[6, 3]`: one row per word.
// ANCHOR: your_journey
pub fn your_journey() -> Tensor {
    tensor!([
        [0.43, 0.15, 0.89], // Your
        [0.55, 0.87, 0.66], // journey
        [0.57, 0.85, 0.64], // starts
        [0.22, 0.58, 0.33], // with
        [0.77, 0.25, 0.10], // one
        [0.05, 0.80, 0.55], // step
    ])
}
// ANCHOR_END: your_journey

/// The words of [`your_journey`], for labelling rows and figures.
pub const YOUR_JOURNEY_WORDS: [&str; 6] =
    ["Your", "journey", "starts", "with", "one", "step"];

/// Raschka's article's sentence, embedded by `Embedding(6, 16)` after `manual_seed(123)`.
pub const LIFE_IS_SHORT: &str = "Life is short, eat dessert first";

/// Politi's sentence, already tokenized to these ids: my, name, is, marcello, politi.
///
/// # Shapes
/// Returns `[5]`.
pub fn my_name_ids() -> Tensor<i64> {
    tensor!([2, 6, 8, 3, 1])
}
