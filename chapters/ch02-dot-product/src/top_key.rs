//! Which key does each query attend to most? With dot-product scores the answer is not
//! always "itself": `x·y` grows with the length of `y`, so a long vector that points
//! roughly the same way beats the query's own vector. Divide every vector by its length
//! first (cosine similarity) and the query itself wins, since `cos(x, x) = 1` is the
//! largest a cosine can be.

use shared::Tensor;

use crate::answers::Score;

/// For every query (row of `weights`), the key with the largest weight; the first one if
/// several tie.
///
/// # Shapes
/// `weights`: `[queries, keys]`. Returns one key index per query.
// ANCHOR: top_key
pub fn top_key(weights: &Tensor) -> Vec<usize> {
    weights
        .argmax_dim(-1, false)
        .to_vec()
        .iter()
        .map(|&key| key as usize)
        .collect()
}
// ANCHOR_END: top_key

/// The scores of chapter 2 with every vector first divided by its length: `uᵢ·uⱼ` with
/// `uᵢ = xᵢ/|xᵢ|`, the cosine of the angle between tokens `i` and `j`.
///
/// # Shapes
/// `inputs`: `[n, d]`, no row all zeros. Returns `[n, n]`.
// ANCHOR: cosine_scores
pub fn cosine_scores(inputs: &Tensor) -> Tensor {
    let lengths = (inputs * inputs).sum_dim(-1, true).sqrt(); // [n, 1]
    let unit = inputs / &lengths; // [n, d], every row of length 1
    unit.matmul(&unit.t())
}
// ANCHOR_END: cosine_scores

/// The question: after the softmax of these scores, does every token, whatever the
/// inputs, give its largest weight to itself?
// ANCHOR: predict_always_itself
pub fn predict_always_itself(score: Score) -> bool {
    match score {
        // A longer vector pointing nearly the same way scores higher than the query itself.
        Score::DotProduct => false,
        // No cosine exceeds cos(x, x) = 1.
        Score::Cosine => true,
    }
}
// ANCHOR_END: predict_always_itself
