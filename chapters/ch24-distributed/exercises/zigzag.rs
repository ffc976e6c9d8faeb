//! Zigzag shards: which two chunks a rank holds.

/// The two chunks rank `rank` of `world` holds when the sequence is cut into `2 * world`
/// chunks: one from the front and its mirror from the back, so that the early chunk's
/// little causal work and the late chunk's much add up to the same on every rank.
///
/// # Shapes
/// Counts only: `rank < world`; returns chunk indices below `2 * world`, the earlier first.
pub fn zigzag_chunks(rank: usize, world: usize) -> [usize; 2] {
    // TODO: the early chunk counts from the front, its mirror from the back.
    let _ = (rank, world);
    todo!("zigzag_chunks: one chunk from the front, its mirror from the back")
}
