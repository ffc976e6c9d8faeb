//! Version 2 of chapter 18's block-sparse attention: the listing's bits, its kernel
//! version 2 of chapter 16's.
//!
//! [`sparse_attention_tiled`](ch18_linear_attention::sparse::sparse_attention_tiled) runs
//! chapter 16's listing over the kept keys' tiles; this is the same block mask run by
//! [`flex_kernel_fast`], the same additions in the same order in vector instructions, so
//! the same output, block mask and visits.

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::Visits;
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::unchanged;
use ch18_linear_attention::sparse::Kept;
use shared::{Result, Tensor};

use crate::flex::v2_same_bits::flex_kernel_fast;

/// [`sparse_attention_tiled`](ch18_linear_attention::sparse::sparse_attention_tiled), bit
/// for bit, by version 2 of chapter 16's kernel.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`, `kept`: `[T, T]`, `tile` ≥ 1. Returns `[T, d_v]`.
pub fn sparse_attention_tiled_fast(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    kept: &Kept,
    tile: usize,
) -> Result<(Tensor, BlockMask, Visits)> {
    let (queries, keys) = (kept.size(0), kept.size(1));
    let kept = kept.to_vec();
    let keeps = |_b: usize, _h: usize, i: usize, j: usize| kept[i * keys + j];
    let block_mask = BlockMask::new(keeps, 1, 1, queries, keys, tile)?;
    let one_head = |x: &Tensor| x.unsqueeze(0).unsqueeze(0);
    let (k, v) = (one_head(k), one_head(v));
    let kv = InTensors::new(&k, &v)?;
    let result = flex_kernel_fast(&one_head(q), &kv, &block_mask, unchanged, keeps)?;
    Ok((
        result.out.squeeze_dim(0).squeeze_dim(0),
        block_mask,
        result.visits,
    ))
}
