//! Where the next token's key and value are written: the copy-on-write decision.

use crate::write::Write;

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
