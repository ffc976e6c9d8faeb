//! The attention core, forward with a tape, and its backward.
//!
//! Chapters 5 and 7 compute, per sequence (and per head),
//! `scores = Q·Kᵀ`, `masked = scores` with the future set to `-inf`, `P = softmax(masked /
//! √d_k)`, `P' = dropout(P)`, `out = P'·V`. To go backwards, each step needs something of
//! the forward: the products need their operands, softmax its output `P`, dropout its
//! noise, the mask its places. [`attention_forward`] runs the same operations as the
//! chapters' modules and keeps those on an [`AttentionTape`]; the backward is in
//! [`attention_backward`].

use ch05_causal::masked_softmax::masked_softmax;
use shared::Tensor;
use shared::nn::Dropout;

#[cfg_attr(feature = "exercise", path = "../../exercises/attention_backward.rs")]
mod backward;
pub use backward::attention_backward;

/// What the attention core's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct AttentionTape {
    /// `[.., tokens, d_k]`.
    pub queries: Tensor,
    /// `[.., tokens, d_k]`.
    pub keys: Tensor,
    /// `[.., tokens, d_v]`.
    pub values: Tensor,
    /// `[tokens, tokens]`, `true` where a query must not see a key.
    pub hidden: Tensor<bool>,
    /// `√d_k`, the divisor of the scores.
    pub scale: f32,
    /// The softmax output `P`, `[.., tokens, tokens]`.
    pub weights: Tensor,
    /// Dropout's noise (0 or `1/(1 - p)`), or `None` when nothing was dropped.
    pub noise: Option<Tensor>,
    /// The weights after dropout, `P'`, which multiply the values.
    pub dropped: Tensor,
}

/// Causal attention of `queries` over `keys` and `values`, as chapter 5's
/// `CausalAttention` and chapter 7's `MultiHeadAttention` compute it (the same
/// operations in the same order, so the same bits and the same dropout draws), returning
/// the context vectors and the tape.
///
/// # Shapes
/// `queries`, `keys`: `[.., tokens, d_k]`, `values`: `[.., tokens, d_v]`, `hidden`:
/// `[tokens, tokens]`. Returns `[.., tokens, d_v]`.
// ANCHOR: attention_forward
pub fn attention_forward(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    hidden: &Tensor<bool>,
    dropout: &Dropout,
) -> (Tensor, AttentionTape) {
    let d_k = keys.size(-1);
    let scores = queries.matmul(&keys.transpose(-2, -1));
    let weights = masked_softmax(&scores, hidden, d_k);
    let (dropped, noise) = dropout.forward_with_noise(&weights);
    let out = dropped.matmul(values);
    let tape = AttentionTape {
        queries: queries.clone(),
        keys: keys.clone(),
        values: values.clone(),
        hidden: hidden.clone(),
        scale: (d_k as f32).sqrt(),
        weights,
        noise,
        dropped,
    };
    (out, tape)
}
// ANCHOR_END: attention_forward

/// The gradients of the attention core's three inputs.
#[derive(Clone, Debug)]
pub struct AttentionGrads {
    /// `[.., tokens, d_k]`.
    pub queries: Tensor,
    /// `[.., tokens, d_k]`.
    pub keys: Tensor,
    /// `[.., tokens, d_v]`.
    pub values: Tensor,
}
