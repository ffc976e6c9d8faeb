//! Exercise: the attention core's backward. Replace the `todo!()`; test with
//! `cargo test -p ch10-backward --features exercise attention_backward`.

use shared::Tensor;

use crate::attention::{AttentionGrads, AttentionTape};

/// The forward's steps backwards, from the gradient of the context vectors to the gradients
/// of the queries, keys and values.
///
/// # Shapes
/// `grad_out`: `[.., tokens, d_v]`. Returns the shapes of the tape's queries, keys and
/// values.
pub fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads {
    // TODO: undo the forward's steps from last to first: out = P'·V (matmul_backward),
    // P' = dropout(P), P = softmax(scaled), scaled = masked / √d_k, the mask, and
    // scores = Q·Kᵀ. The pieces are in crate::matmul, crate::pointwise, crate::softmax.
    let _ = (tape, grad_out);
    todo!("attention_backward")
}
