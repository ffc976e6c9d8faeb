//! Attention weights that stay finite when a query sees no key, kept in its own file
//! because it is an exercise.

use shared::Tensor;

use super::attention_weights;

/// [`attention_weights`] with `-inf`, except that a query whose every key is hidden gets
/// weights of 0 instead of NaN, so its context vector is 0 (recent PyTorch CPU
/// kernels of `scaled_dot_product_attention` do the same). Every other row is exactly
/// what `-inf` gives.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`; `hidden` broadcasts to
/// `[.., queries, keys]`. Returns `[.., queries, keys]`.
// ANCHOR: safe_attention_weights
pub fn safe_attention_weights(
    q: &Tensor,
    k: &Tensor,
    hidden: &Tensor<bool>, // true where a key is hidden from a query
) -> Tensor {
    let weights = attention_weights(q, k, hidden, f32::NEG_INFINITY);
    // Only a fully hidden row is NaN: there every score was -inf.
    weights.masked_fill(&weights.isnan(), 0.0)
}
// ANCHOR_END: safe_attention_weights
