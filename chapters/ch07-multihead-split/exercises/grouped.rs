//! Exercise: grouped-query attention, key/value heads shared by query heads. Replace the
//! `todo!()`s; test with `cargo test -p ch07-multihead-split --features exercise repeat_kv`.

use shared::Tensor;

/// Every key (or value) head repeated `groups` times in a row along the head dim: heads
/// `0, 0, .., 1, 1, ..`, so that query head `h` meets key/value head `h / groups`.
///
/// # Shapes
/// `x`: `[batch, kv_heads, tokens, head_dim]`. Returns
/// `[batch, kv_heads · groups, tokens, head_dim]`. `groups >= 1`.
pub fn repeat_kv(x: &Tensor, groups: usize) -> Tensor {
    // TODO: `groups` copies of every head, each head's copies next to each other.
    let _ = (x, groups);
    todo!("repeat_kv")
}

/// The question, in code: which key/value head does query head `query_head` use, when
/// `num_heads` query heads share `kv_heads` key/value heads (`kv_heads` divides
/// `num_heads`)?
pub fn kv_head_of(query_head: usize, num_heads: usize, kv_heads: usize) -> usize {
    // TODO: your answer, as a formula.
    let _ = (query_head, num_heads, kv_heads);
    todo!("kv_head_of")
}
