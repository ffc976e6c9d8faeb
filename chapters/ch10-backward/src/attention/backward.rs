//! The attention core's backward (an exercise): see [`crate::attention`].

use shared::Tensor;

use crate::attention::{AttentionGrads, AttentionTape};
use crate::matmul::matmul_backward;
use crate::pointwise::{dropout_backward, masked_fill_backward, scale_backward};
use crate::softmax::softmax_backward;

/// The forward's steps backwards, from the gradient of the context vectors to the gradients
/// of the queries, keys and values.
///
/// # Shapes
/// `grad_out`: `[.., tokens, d_v]`, the shape of the forward's output. Returns the shapes
/// of the tape's queries, keys and values.
// ANCHOR: attention_backward
pub fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads {
    // out = P'·V
    let (dropped, values) = (&tape.dropped, &tape.values);
    let (grad_dropped, grad_values) = matmul_backward(dropped, values, grad_out);
    // P' = dropout(P)
    let grad_weights = dropout_backward(&grad_dropped, tape.noise.as_ref());
    // P = softmax(scaled)
    let grad_scaled = softmax_backward(&tape.weights, &grad_weights);
    // scaled = masked / √d_k
    let grad_masked = scale_backward(&grad_scaled, tape.scale);
    // masked = scores with -inf where hidden
    let grad_scores = masked_fill_backward(&grad_masked, &tape.hidden);
    // scores = Q·Kᵀ: the second gradient is that of Kᵀ
    let keys_t = tape.keys.transpose(-2, -1);
    let queries = &tape.queries;
    let (grad_queries, grad_keys_t) = matmul_backward(queries, &keys_t, &grad_scores);
    AttentionGrads {
        queries: grad_queries,
        keys: grad_keys_t.transpose(-2, -1),
        values: grad_values,
    }
}
// ANCHOR_END: attention_backward
