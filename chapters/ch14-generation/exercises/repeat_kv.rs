//! Exercise: share key/value heads between groups of query heads. Replace the `todo!()`;
//! test with `cargo test -p ch14-generation --features exercise repeat_kv`.

use shared::Tensor;

/// Every key/value head repeated `n_rep` times in a row: head `h` of the result is head
/// `h / n_rep` of `x`.
///
/// # Shapes
/// `x`: `[batch, n_kv_heads, tokens, head_dim]`.
/// Returns `[batch, n_kv_heads · n_rep, tokens, head_dim]`.
pub fn repeat_kv(x: &Tensor, n_rep: usize) -> Tensor {
    // TODO: add a dim of size 1 after the heads, expand it to n_rep, and fold it into the
    // heads dim, so that kv head g becomes heads g·n_rep .. (g+1)·n_rep.
    let _ = (x, n_rep);
    todo!("repeat_kv")
}
