//! Chapter 5's `CausalAttention`, forward with a tape and backward.
//!
//! The forward calls the module's own layers in the module's order (keys, values,
//! queries) and the attention core of [`crate::attention`]; the backward runs the core's
//! backward and then each projection's. The input `x` fed three layers, so its gradient
//! is the sum of the three.

use ch05_causal::CausalAttention;
use shared::Tensor;

use crate::attention::{AttentionTape, attention_backward, attention_forward};
use crate::linear::{LinearGrads, linear_backward};

/// What `CausalAttention`'s backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct CausalTape {
    /// The input, `[batch, tokens, d_in]`.
    pub x: Tensor,
    /// The attention core's tape.
    pub attention: AttentionTape,
}

/// `ca.forward(x)`, returning the same tensor (bits and dropout draws included) and the
/// tape.
///
/// # Shapes
/// `x`: `[batch, tokens, d_in]`. Returns `[batch, tokens, d_out]`.
// ANCHOR: causal_forward
pub fn causal_forward(ca: &CausalAttention, x: &Tensor) -> (Tensor, CausalTape) {
    let num_tokens = x.size(-2);
    let keys = ca.w_key.forward(x);
    let values = ca.w_value.forward(x);
    let queries = ca.w_query.forward(x);
    let mask = ca.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
    let (out, core) = attention_forward(&queries, &keys, &values, &mask, &ca.dropout);
    let tape = CausalTape {
        x: x.clone(),
        attention: core,
    };
    (out, tape)
}
// ANCHOR_END: causal_forward

/// The gradients of `CausalAttention`'s three projections and of its input.
#[derive(Clone, Debug)]
pub struct CausalGrads {
    /// `W_query`.
    pub w_query: LinearGrads,
    /// `W_key`.
    pub w_key: LinearGrads,
    /// `W_value`.
    pub w_value: LinearGrads,
    /// The input `x`: `[batch, tokens, d_in]`.
    pub input: Tensor,
}

/// The backward of [`causal_forward`], given the gradient of its output.
///
/// # Shapes
/// `grad_out`: `[batch, tokens, d_out]`. The gradients have the shapes of what they are
/// the gradients of.
// ANCHOR: causal_backward
pub fn causal_backward(
    ca: &CausalAttention, // the module
    tape: &CausalTape,    // what its forward pass kept
    grad_out: &Tensor,    // the gradient of its output
) -> CausalGrads {
    let core = attention_backward(&tape.attention, grad_out);
    let w_query = linear_backward(&ca.w_query, &tape.x, &core.queries);
    let w_key = linear_backward(&ca.w_key, &tape.x, &core.keys);
    let w_value = linear_backward(&ca.w_value, &tape.x, &core.values);
    // Autograd adds the uses of x latest first: queries, values, then keys.
    let input = &(&w_query.input + &w_value.input) + &w_key.input;
    CausalGrads {
        w_query,
        w_key,
        w_value,
        input,
    }
}
// ANCHOR_END: causal_backward
