//! Exercise: shuffle the other sequence and predict what cross-attention does. Replace the
//! `todo!()`s; test with `cargo test -p ch08-cross-attention --features exercise shuffle_tokens`.

use shared::Tensor;

use crate::answers::Change;

/// The rows of `x` in the order `order`: row `i` of the result is row `order[i]` of `x`.
///
/// # Shapes
/// `x`: `[m, d]`, `order`: a permutation of `0..m`. Returns `[m, d]`.
pub fn shuffle_tokens(x: &Tensor, order: &[usize]) -> Tensor {
    // TODO: pick the rows in the given order.
    let _ = (x, order);
    todo!("shuffle_tokens")
}

/// The question: shuffle the tokens of `other` (keys and values come from them), keep
/// the query. What happens to the weights, and to the context vector? Returns
/// `(weights, context)`.
pub fn predict_shuffled_other() -> (Change, Change) {
    // TODO: your prediction for the weights and for the context vector.
    todo!("predict_shuffled_other")
}
