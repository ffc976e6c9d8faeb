//! What the ring costs, counted: query-key products per rank and bytes each rank sends.
//! Neither depends on the machine, so the chapter prints them beside any time.

use crate::setup::Sizes;
use crate::shards::Layout;

/// The query-key products rank `rank` computes in a causal ring over `world` ranks: for
/// each of its query chunks and every key chunk, the pairs the causal mask lets through,
/// for every head.
///
/// # Shapes
/// Counts only; `sizes.tokens` must split into `layout.chunks(world)` chunks.
pub fn products_of_rank(
    sizes: Sizes,
    world: usize,
    layout: Layout,
    rank: usize,
) -> u64 {
    // TODO: for each chunk of queries the rank holds, count the (query, key) pairs the
    // causal mask lets through over the whole sequence, then multiply by the heads.
    let _ = (sizes, world, layout, rank);
    todo!(
        "products_of_rank: visible query-key pairs of the rank's chunks, every head"
    )
}
