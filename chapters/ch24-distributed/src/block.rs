//! One block of the ring: a chunk of queries against a chunk of keys and values, through
//! chapter 16's tiled kernel, which keeps each query's log-sum-exp for the merge.

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::flex_kernel_over;
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{MaskMod, causal, no_mask, unchanged};
use ch17_inference::split_kv::Part;
use shared::{Result, Tensor};

use crate::block_kind::{BlockKind, classify_block};
use crate::setup::TILE;

/// The attention of query chunk `q_chunk` over key chunk `kv_chunk`, normalised over that
/// chunk's keys alone, with each query's log-sum-exp; `None` when the causal mask hides
/// the whole block, which is then never computed.
///
/// # Shapes
/// `q`: `[batch, heads, len, d]`, `k`, `v`: `[batch, heads, len, d]` (chunks of the same
/// length). Returns `[batch, heads, len, d]` and `[batch, heads, len]`.
// ANCHOR: attend_block
pub fn attend_block(
    q: &Tensor, // [batch, heads, len, d]
    k: &Tensor, // [batch, heads, len, d]
    v: &Tensor, // [batch, heads, len, d]
    q_chunk: usize,
    kv_chunk: usize,
) -> Result<Option<Part>> {
    match classify_block(q_chunk, kv_chunk) {
        BlockKind::Skip => Ok(None),
        // Both chunks start at the same token, so the causal mask in the chunk's own
        // positions is the causal mask of the sequence.
        BlockKind::Diagonal => kernel(q, k, v, causal).map(Some),
        BlockKind::Full => kernel(q, k, v, no_mask).map(Some),
    }
}
// ANCHOR_END: attend_block

/// Chapter 16's kernel over one block with `mask_mod`, in tiles of [`TILE`].
fn kernel(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask_mod: impl MaskMod + Copy,
) -> Result<Part> {
    let [_, _, queries, _] = q.dims();
    let block_mask = BlockMask::new(mask_mod, 1, 1, queries, k.size(2), TILE)?;
    let kv = InTensors::new(k, v)?;
    let result = flex_kernel_over(q, &kv, &block_mask, unchanged, mask_mod)?;
    Ok(Part {
        out: result.out,
        lse: result.lse,
    })
}
