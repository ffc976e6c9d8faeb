//! Is multi-head attention just one big head? Put the weight matrices of `h` heads of
//! `d_out` features each on top of one another and you get one head of `h·d_out` features,
//! with the same number of parameters. Its queries, keys and values are the heads' ones
//! side by side, but its score for a query and a key is the sum of the heads' scores, and
//! one softmax of that sum gives one set of weights for all features. Separate heads each
//! take their own softmax, so each can look at other tokens.

use shared::Tensor;

use crate::answers::Outcome;

/// The weights of `h` heads stacked into the weights of one head: head 0's `d_out` rows,
/// then head 1's, and so on.
///
/// # Shapes
/// `w`: `[heads, d_out, d]`. Returns `[heads · d_out, d]`.
// ANCHOR: one_big_head
pub fn one_big_head(w: &Tensor) -> Tensor {
    let [heads, d_out, d] = w.dims();
    w.reshape([heads * d_out, d])
}
// ANCHOR_END: one_big_head

/// The question: for `heads` heads with random weights, is the output of one big head
/// (weights from [`one_big_head`] for queries, keys and values) the same as the heads'
/// outputs side by side?
// ANCHOR: predict_one_big_head
pub fn predict_one_big_head(heads: usize) -> Outcome {
    // One softmax of the summed scores against one softmax per head: the same only when
    // there is a single head.
    if heads == 1 {
        Outcome::Same
    } else {
        Outcome::Different
    }
}
// ANCHOR_END: predict_one_big_head
