//! Exercise: attention weights that stay finite when a mask hides every key of a query.
//! First predict what `softmax` gives on a row whose scores are all `-inf` (then look at
//! the step "A fully masked row" of `cargo run -p ch13-block`). Replace the body; test with
//! `cargo test -p ch13-block --features exercise safe_attention_weights`.

use shared::Tensor;

use super::attention_weights;

/// Like `attention_weights(q, k, hidden, -inf)`, but a query whose keys are all hidden
/// gets weights of 0 (not NaN); every other row is unchanged.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`; `hidden` broadcasts to
/// `[.., queries, keys]`. Returns `[.., queries, keys]`.
pub fn safe_attention_weights(
    q: &Tensor,
    k: &Tensor,
    hidden: &Tensor<bool>, // true where a key is hidden from a query
) -> Tensor {
    // TODO: this is the plain masked softmax. Find what it gives on a fully hidden row and
    // change it so that such a row comes out as zeros, without changing any other row.
    attention_weights(q, k, hidden, f32::NEG_INFINITY)
}
