//! The block-table lookup: where a token's key and value live in the pool.

/// The physical block and the offset inside it of the token at `position`: the table maps
/// logical block `position / block_size` to a physical block, and the token sits at
/// `position mod block_size` inside it.
///
/// # Shapes
/// `table`: one physical block id per logical block of the sequence.
///
/// # Panics
/// If `position` lies beyond the table's blocks.
// ANCHOR: slot
pub fn slot(table: &[usize], block_size: usize, position: usize) -> (usize, usize) {
    (table[position / block_size], position % block_size)
}
// ANCHOR_END: slot
