//! Attention weights under a mask, and what happens when a mask hides every key of a
//! query.
//!
//! A hidden score is set to `-inf` so that `exp` turns it into an exact 0. If a row is
//! hidden entirely, its softmax computes `exp(-inf - (-inf)) = exp(NaN)`: the whole row is
//! NaN, and one NaN weight spreads into every later product. Two fixes the tutorials use:
//! fill with a large finite negative number instead (`torch.finfo(float32).min` or
//! `-1e9`; a fully hidden row then becomes uniform, and every other row is unchanged), or
//! keep `-inf` and turn the NaN rows into zeros after the softmax
//! ([`safe_attention_weights`]).

use shared::Tensor;

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/safe_attention_weights.rs"
)]
mod safe;
pub use safe::safe_attention_weights;

/// `softmax(q·kᵀ/√d)` with the scores set to `fill` where `hidden` is `true`. One head and
/// no projections: the chapter passes the tokens themselves as queries and keys, so only the
/// mask decides what changes.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`; `hidden` broadcasts to
/// `[.., queries, keys]`. Returns `[.., queries, keys]`.
// ANCHOR: attention_weights
pub fn attention_weights(
    q: &Tensor,
    k: &Tensor,
    hidden: &Tensor<bool>, // true where a key is hidden from a query
    fill: f32,             // the score a hidden key gets before the softmax
) -> Tensor {
    let d = q.size(-1) as f32;
    let scores = q.matmul(&k.transpose(-2, -1)) / d.sqrt();
    scores.masked_fill(hidden, fill).softmax(-1)
}
// ANCHOR_END: attention_weights
