//! Grouped-query attention: fewer key/value heads than query heads (Ainslie et al., 2023,
//! "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints").
//! A model that generates text keeps every token's keys and values in memory; with
//! `kv_heads` of them instead of `num_heads`, that memory shrinks `num_heads / kv_heads`
//! times. Each key/value head serves a group of consecutive query heads: with 8 query heads
//! and 2 key/value heads, query heads 0-3 share key/value head 0 and 4-7 share head 1.
//! Repeating every key/value head once per query head of its group turns this back into
//! ordinary multi-head attention (PyTorch's `scaled_dot_product_attention(..., enable_gqa=True)`
//! does the same with `repeat_interleave`).

use shared::Tensor;

/// Every key (or value) head repeated `groups` times in a row along the head dim: heads
/// `0, 0, .., 1, 1, ..`, so that query head `h` meets key/value head `h / groups`.
///
/// # Shapes
/// `x`: `[batch, kv_heads, tokens, head_dim]`. Returns
/// `[batch, kv_heads · groups, tokens, head_dim]`. `groups >= 1`.
// ANCHOR: repeat_kv
pub fn repeat_kv(x: &Tensor, groups: usize) -> Tensor {
    let [b, kv_heads, tokens, head_dim] = x.dims();
    // [b, kv_heads, 1, tokens, head_dim] -> [b, kv_heads, groups, tokens, head_dim]:
    // each head's copies next to each other, then the two head dims as one.
    x.unsqueeze(2)
        .expand([b, kv_heads, groups, tokens, head_dim])
        .reshape([b, kv_heads * groups, tokens, head_dim])
}
// ANCHOR_END: repeat_kv

/// The question, in code: which key/value head does query head `query_head` use, when
/// `num_heads` query heads share `kv_heads` key/value heads (`kv_heads` divides
/// `num_heads`)?
// ANCHOR: kv_head_of
pub fn kv_head_of(query_head: usize, num_heads: usize, kv_heads: usize) -> usize {
    // Consecutive query heads form a group of num_heads / kv_heads.
    query_head / (num_heads / kv_heads)
}
// ANCHOR_END: kv_head_of
