//! The three ways a paged cache writes one more token: into a fresh block, in place, or into
//! a copy of a block that other sequences share.

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
