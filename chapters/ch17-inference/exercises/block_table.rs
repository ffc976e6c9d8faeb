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
pub fn slot(table: &[usize], block_size: usize, position: usize) -> (usize, usize) {
    // TODO: which logical block holds `position`, which physical block the table maps it
    // to, and how far into that block the token sits.
    let _ = (table, block_size, position);
    todo!("slot: the physical block and the offset of a position")
}
