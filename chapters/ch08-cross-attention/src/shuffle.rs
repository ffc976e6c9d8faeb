//! What cross-attention knows about the order of the other sequence: nothing. A query
//! scores every key on its own and the context vector is a weighted sum, and a sum does not
//! care about the order of its terms. Shuffle the other sequence's tokens and each keeps
//! its score and its weight; only the list of weights comes out in the new order. (This is
//! why Transformers add position information to the tokens before attention.)

use shared::{Tensor, stack};

use crate::answers::Change;

/// The rows of `x` in the order `order`: row `i` of the result is row `order[i]` of `x`.
///
/// # Shapes
/// `x`: `[m, d]`, `order`: a permutation of `0..m`. Returns `[m, d]`.
// ANCHOR: shuffle_tokens
pub fn shuffle_tokens(x: &Tensor, order: &[usize]) -> Tensor {
    let rows: Vec<Tensor> = order.iter().map(|&i| x.get(i)).collect();
    stack(&rows, 0)
}
// ANCHOR_END: shuffle_tokens

/// The question: shuffle the tokens of `other` (keys and values come from them), keep
/// the query. What happens to the weights, and to the context vector? Returns
/// `(weights, context)`.
// ANCHOR: predict_shuffled_other
pub fn predict_shuffled_other() -> (Change, Change) {
    // Every token keeps its score, so its weight moves with it; the weighted sum of the
    // values adds the same terms in another order.
    (Change::ShuffledLikeTheTokens, Change::Unchanged)
}
// ANCHOR_END: predict_shuffled_other
