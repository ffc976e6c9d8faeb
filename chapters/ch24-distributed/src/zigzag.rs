//! Zigzag shards: which two chunks a rank holds.

/// The two chunks rank `rank` of `world` holds when the sequence is cut into `2 * world`
/// chunks: one from the front and its mirror from the back, so that the early chunk's
/// little causal work and the late chunk's much add up to the same on every rank.
///
/// # Shapes
/// Counts only: `rank < world`; returns chunk indices below `2 * world`, the earlier first.
// ANCHOR: zigzag_chunks
pub fn zigzag_chunks(rank: usize, world: usize) -> [usize; 2] {
    [rank, 2 * world - 1 - rank]
}
// ANCHOR_END: zigzag_chunks
