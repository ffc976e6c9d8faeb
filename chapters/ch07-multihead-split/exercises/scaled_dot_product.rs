//! Exercise: Sum's scaled dot-product attention. Replace the `todo!()`; test with
//! `cargo test -p ch07-multihead-split --features exercise scaled_dot_product_attention`.

use shared::Tensor;

/// Attention of every query over every key, hiding the keys where `mask` is `false`.
/// Returns `(output, weights)`.
///
/// # Shapes
/// `q`: `[.., queries, d_k]`, `k`: `[.., keys, d_k]`, `v`: `[.., keys, d_v]`; `mask`
/// broadcasts to `[.., queries, keys]`. Returns `output`: `[.., queries, d_v]` and
/// `weights`: `[.., queries, keys]`.
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor<bool>>,
) -> (Tensor, Tensor) {
    // TODO: scores = q·kᵀ (transpose the last two dims of k) divided by √d_k; where the
    // mask is false, set the score to -inf; softmax over the last dim gives the weights;
    // the output is weights·v. Return both.
    let _ = (q, k, v, mask);
    todo!("scaled_dot_product_attention")
}
