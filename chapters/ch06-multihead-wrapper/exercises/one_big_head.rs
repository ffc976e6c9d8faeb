//! Exercise: the heads' weights as one big head, and a prediction. Replace the `todo!()`s;
//! test with `cargo test -p ch06-multihead-wrapper --features exercise one_big_head`.

use shared::Tensor;

use crate::answers::Outcome;

/// The weights of `h` heads stacked into the weights of one head: head 0's `d_out` rows,
/// then head 1's, and so on.
///
/// # Shapes
/// `w`: `[heads, d_out, d]`. Returns `[heads · d_out, d]`.
pub fn one_big_head(w: &Tensor) -> Tensor {
    // TODO: put the heads' matrices on top of one another.
    let _ = w;
    todo!("one_big_head")
}

/// The question: for `heads` heads with random weights, is the output of one big head
/// (weights from [`one_big_head`] for queries, keys and values) the same as the heads'
/// outputs side by side?
pub fn predict_one_big_head(heads: usize) -> Outcome {
    // TODO: your prediction (it may depend on `heads`).
    let _ = heads;
    todo!("predict_one_big_head")
}
