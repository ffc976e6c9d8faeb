//! Where the next token's key and value are written: the copy-on-write decision.

use crate::write::Write;

/// Decides how the token at position `t` is written, given how many sequences share the
/// sequence's last block (`refs`, `None` when it has no block yet).
///
/// # Shapes
/// Scalars only.
pub fn write_target(t: usize, block_size: usize, refs: Option<usize>) -> Write {
    // TODO: a sequence without blocks, or whose last block is full, needs a new block; a
    // last block with room that other sequences also read must be copied first; otherwise
    // the token goes into it.
    let _ = (t, block_size, refs);
    todo!("write_target: new block, in place, or copy-on-write")
}
