//! Grouped-query attention: fewer key/value heads than query heads.
//!
//! With `n_heads` query heads and `n_kv_heads` key/value heads (`n_heads` a multiple of
//! it), query heads `g·n_rep .. (g+1)·n_rep` all read key/value head `g`, where
//! `n_rep = n_heads / n_kv_heads`. `n_kv_heads = n_heads` is ordinary multi-head attention,
//! `n_kv_heads = 1` multi-query attention. The cache stores only the `n_kv_heads` heads;
//! `repeat_kv` copies them out to one per query head just before the products.

use shared::Tensor;

/// Hugging Face's `repeat_kv`: every key/value head repeated `n_rep` times in a row, so
/// that head `h` of the result is head `h / n_rep` of `x` (the same as PyTorch's
/// `x.repeat_interleave(n_rep, dim=1)`).
///
/// # Shapes
/// `x`: `[batch, n_kv_heads, tokens, head_dim]`.
/// Returns `[batch, n_kv_heads · n_rep, tokens, head_dim]`.
// ANCHOR: repeat_kv
pub fn repeat_kv(x: &Tensor, n_rep: usize) -> Tensor {
    if n_rep == 1 {
        return x.clone();
    }
    let [b, n_kv, t, hd] = [0, 1, 2, 3].map(|d| x.size(d) as i64);
    // A new dim of size 1 after the heads, expanded to n_rep (a view, nothing
    // copied), then folded into the heads dim: kv head g becomes heads
    // g·n_rep .. (g+1)·n_rep.
    x.unsqueeze(2)
        .expand(&[b, n_kv, n_rep as i64, t, hd])
        .reshape(&[b, n_kv * n_rep as i64, t, hd])
}
// ANCHOR_END: repeat_kv
