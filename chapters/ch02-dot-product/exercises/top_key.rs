//! Exercise: which key each query attends to most, cosine scores, and a prediction. Replace
//! the `todo!()`s; test with `cargo test -p ch02-dot-product --features exercise top_key`.

use shared::Tensor;

use crate::answers::Score;

/// For every query (row of `weights`), the key with the largest weight; the first one if
/// several tie.
///
/// # Shapes
/// `weights`: `[queries, keys]`. Returns one key index per query.
pub fn top_key(weights: &Tensor) -> Vec<usize> {
    // TODO: the column of the largest weight in every row.
    let _ = weights;
    todo!("top_key")
}

/// The scores of chapter 2 with every vector first divided by its length: `uᵢ·uⱼ` with
/// `uᵢ = xᵢ/|xᵢ|`, the cosine of the angle between tokens `i` and `j`.
///
/// # Shapes
/// `inputs`: `[n, d]`, no row all zeros. Returns `[n, n]`.
pub fn cosine_scores(inputs: &Tensor) -> Tensor {
    // TODO: make every row of length 1, then all dot products at once.
    let _ = inputs;
    todo!("cosine_scores")
}

/// The question: after the softmax of these scores, does every token, whatever the
/// inputs, give its largest weight to itself?
pub fn predict_always_itself(score: Score) -> bool {
    // TODO: your prediction for each kind of score.
    let _ = score;
    todo!("predict_always_itself")
}
