//! Exercise: FlashAttention's algorithm with tensor operations. Replace the `todo!()`;
//! test with `cargo test -p ch09-flash-attention --features exercise tiled_attention`.

use shared::Tensor;

/// `softmax(q·kᵀ/√d)·v` (with the causal mask if `causal`), computed in tiles of `block`
/// queries by `block` keys with the online softmax, skipping the tiles above the diagonal.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, the same leading
/// dims. Returns `[.., queries, d_v]`. `block > 0`.
pub fn tiled_attention(
    q: &Tensor, // [.., queries, d]
    k: &Tensor, // [.., keys, d]
    v: &Tensor, // [.., keys, d_v]
    block: usize,
    causal: bool,
) -> Tensor {
    // TODO: for every block of queries (`narrow` on dim -2): a running max (-inf), a running
    // sum (0), both [.., rows, 1], and an output [.., rows, d_v] of zeros. For every block
    // of keys up to `crate::blocks::key_block_count(..)`: scores = q_block·k_blockᵀ / √d;
    // if `crate::blocks::tile_needs_mask(..)`, set the scores of later keys to -inf; the new
    // max is `max.maximum(&scores.max_dim(-1, true).0)`; weights = exp(scores - new max);
    // rescale = exp(max - new max); sum = rescale·sum + weights summed over the keys;
    // out = rescale·out + weights·v_block. Each query block's result is out / sum; `cat`
    // them along dim -2.
    let _ = (q, k, v, block, causal);
    todo!("tiled_attention")
}
