//! Where the next token's key and value are written: the copy-on-write decision.

/// What appending one token to a sequence does to its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// The last block is full (or there is none): take a fresh block from the pool.
    NewBlock,
    /// The last block has room and belongs to this sequence alone: write into it.
    InPlace,
    /// The last block has room but other sequences read it too: copy it to a fresh block,
    /// point this sequence's table at the copy, then write into the copy.
    CopyOnWrite,
}

/// Decides how the token at position `t` is written, given how many sequences share the
/// sequence's last block (`refs`, `None` when it has no block yet).
///
/// # Shapes
/// Scalars only.
// ANCHOR: write_target
pub fn write_target(t: usize, block_size: usize, refs: Option<usize>) -> Write {
    match refs {
        None => Write::NewBlock,
        Some(_) if t.is_multiple_of(block_size) => Write::NewBlock,
        Some(refs) if refs > 1 => Write::CopyOnWrite,
        Some(_) => Write::InPlace,
    }
}
// ANCHOR_END: write_target
