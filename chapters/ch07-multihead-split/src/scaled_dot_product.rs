//! Sum's `scaled_dot_product_attention`: the whole attention formula in one function,
//! `softmax(Q·Kᵀ / √d_k)·V`, for any number of leading (batch, head) dims, with an
//! optional mask of the positions a query may look at.

use shared::Tensor;

/// Attention of every query over every key: scores `q·kᵀ/√d_k`, positions where `mask` is
/// `false` set to `-inf` (so they get weight 0), softmax over the keys, then the weighted
/// sum of the values. Returns `(output, weights)`.
///
/// Sum's article passes a 0/1 mask and hides the places where `mask == 0`; here the mask is
/// already boolean: `true` = may attend. That is the opposite convention to chapter 5's
/// `causal_mask`, which marks the *hidden* future with `true`; a causal mask here is
/// `tril(ones)`, or `causal_mask(n).logical_not()`.
///
/// # Shapes
/// `q`: `[.., queries, d_k]`, `k`: `[.., keys, d_k]`, `v`: `[.., keys, d_v]`; `mask`, if
/// any, broadcasts to `[.., queries, keys]`. Returns `output`: `[.., queries, d_v]` and
/// `weights`: `[.., queries, keys]`, each row summing to 1.
// ANCHOR: scaled_dot_product_attention
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor<bool>>,
) -> (Tensor, Tensor) {
    let d_k = q.size(-1) as f32;
    // [.., queries, keys]
    let mut scores = q.matmul(&k.transpose(-2, -1)) / d_k.sqrt();
    if let Some(mask) = mask {
        scores.masked_fill_(&mask.logical_not(), f32::NEG_INFINITY);
    }
    let weights = scores.softmax(-1);
    let output = weights.matmul(v);
    (output, weights)
}
// ANCHOR_END: scaled_dot_product_attention
