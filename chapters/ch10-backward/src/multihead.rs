//! Chapter 7's `MultiHeadAttention`, forward with a tape and backward.
//!
//! The forward calls the module's own projections in its order (keys, queries, values),
//! splits them into heads with chapter 7's `split_heads`, runs the attention core of
//! [`crate::attention`] on all heads at once, merges the heads and applies `out_proj`. The
//! backward walks the same way back: `out_proj`, the merge, the core, the splits, the
//! projections.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::Tensor;

use crate::attention::{AttentionTape, attention_backward, attention_forward};
use crate::heads::{merge_heads_backward, split_heads_backward};
use crate::linear::{LinearGrads, linear_backward};

/// What `MultiHeadAttention`'s backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct MultiHeadTape {
    /// The input, `[batch, tokens, d_in]`.
    pub x: Tensor,
    /// The attention core's tape, for all heads: `[batch, heads, tokens, ..]`.
    pub attention: AttentionTape,
    /// The merged heads, `out_proj`'s input: `[batch, tokens, d_out]`.
    pub context: Tensor,
}

/// `mha.forward(x)`, returning the same tensor (bits and dropout draws included) and the
/// tape.
///
/// # Shapes
/// `x`: `[batch, tokens, d_in]`. Returns `[batch, tokens, d_out]`.
// ANCHOR: multihead_forward
pub fn multihead_forward(
    mha: &MultiHeadAttention,
    x: &Tensor,
) -> (Tensor, MultiHeadTape) {
    let num_tokens = x.size(1);
    let keys = split_heads(&mha.w_key.forward(x), mha.num_heads);
    let queries = split_heads(&mha.w_query.forward(x), mha.num_heads);
    let values = split_heads(&mha.w_value.forward(x), mha.num_heads);
    let hidden = mha.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
    let (heads, attention) =
        attention_forward(&queries, &keys, &values, &hidden, &mha.dropout);
    let context = merge_heads(&heads);
    let out = mha.out_proj.forward(&context);
    (
        out,
        MultiHeadTape {
            x: x.clone(),
            attention,
            context,
        },
    )
}
// ANCHOR_END: multihead_forward

/// The gradients of `MultiHeadAttention`'s four projections and of its input.
#[derive(Clone, Debug)]
pub struct MultiHeadGrads {
    /// `W_query`.
    pub w_query: LinearGrads,
    /// `W_key`.
    pub w_key: LinearGrads,
    /// `W_value`.
    pub w_value: LinearGrads,
    /// `out_proj` (with its bias).
    pub out_proj: LinearGrads,
    /// The input `x`: `[batch, tokens, d_in]`.
    pub input: Tensor,
}

/// The backward of [`multihead_forward`], given the gradient of its output.
///
/// # Shapes
/// `grad_out`: `[batch, tokens, d_out]`. The gradients have the shapes of what they are
/// the gradients of.
// ANCHOR: multihead_backward
pub fn multihead_backward(
    mha: &MultiHeadAttention,
    tape: &MultiHeadTape,
    grad_out: &Tensor,
) -> MultiHeadGrads {
    let out_proj = linear_backward(&mha.out_proj, &tape.context, grad_out);
    let grad_heads = merge_heads_backward(&out_proj.input, mha.num_heads);
    let core = attention_backward(&tape.attention, &grad_heads);
    // Each head's gradients back side by side: [b, tokens, d_out].
    let grad_queries = split_heads_backward(&core.queries);
    let grad_keys = split_heads_backward(&core.keys);
    let grad_values = split_heads_backward(&core.values);
    let w_query = linear_backward(&mha.w_query, &tape.x, &grad_queries);
    let w_key = linear_backward(&mha.w_key, &tape.x, &grad_keys);
    let w_value = linear_backward(&mha.w_value, &tape.x, &grad_values);
    // Autograd adds the uses of x latest first: values, queries, then keys.
    let input = &(&w_value.input + &w_query.input) + &w_key.input;
    MultiHeadGrads {
        w_query,
        w_key,
        w_value,
        out_proj,
        input,
    }
}
// ANCHOR_END: multihead_backward
