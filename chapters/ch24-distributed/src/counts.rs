//! What the ring costs, counted: query-key products per rank and bytes each rank sends.
//! Neither depends on the machine, so the chapter prints them beside any time.

use crate::block_kind::{BlockKind, classify_block};
use crate::setup::Sizes;
use crate::shards::Layout;

/// The query-key products rank `rank` computes in a causal ring over `world` ranks: for
/// each of its query chunks and every key chunk, the pairs the causal mask lets through,
/// for every head.
///
/// # Shapes
/// Counts only; `sizes.tokens` must split into `layout.chunks(world)` chunks.
// ANCHOR: products
pub fn products_of_rank(
    sizes: Sizes,
    world: usize,
    layout: Layout,
    rank: usize,
) -> u64 {
    let chunks = layout.chunks(world);
    let len = (sizes.tokens / chunks) as u64;
    let mut pairs = 0;
    for q_chunk in layout.chunks_of(rank, world) {
        for kv_chunk in 0..chunks {
            pairs += match classify_block(q_chunk, kv_chunk) {
                BlockKind::Skip => 0,
                BlockKind::Diagonal => len * (len + 1) / 2,
                BlockKind::Full => len * len,
            };
        }
    }
    pairs * sizes.heads as u64
}
// ANCHOR_END: products
