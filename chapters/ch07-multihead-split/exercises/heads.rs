//! Exercise: split a projection into heads and merge the heads back. Replace each
//! `todo!()`; test with `cargo test -p ch07-multihead-split --features exercise heads`.

use shared::Tensor;

/// Cuts the last dim into `num_heads` heads and puts the heads before the tokens.
///
/// # Shapes
/// `x`: `[batch, tokens, d_out]`, contiguous. Returns `[batch, num_heads, tokens, d_out / num_heads]`.
pub fn split_heads(x: &Tensor, num_heads: usize) -> Tensor {
    // TODO: view x as [batch, tokens, num_heads, head_dim], then swap the tokens and heads
    // dims so every head holds a [tokens, head_dim] matrix.
    let _ = (x, num_heads);
    todo!("split_heads")
}

/// Undoes [`split_heads`]: each token's heads side by side in one row.
///
/// # Shapes
/// `x`: `[batch, num_heads, tokens, head_dim]`. Returns `[batch, tokens, num_heads · head_dim]`.
pub fn merge_heads(x: &Tensor) -> Tensor {
    // TODO: swap the heads and tokens dims back, make the result contiguous, and view it as
    // [batch, tokens, -1].
    let _ = x;
    todo!("merge_heads")
}
