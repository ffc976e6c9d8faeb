//! The kind of one block under the causal mask.

use super::BlockKind;

/// The kind of the block of query chunk `q_chunk` and key chunk `kv_chunk` (chunks of
/// equal length, numbered along the sequence) under the causal mask.
///
/// # Shapes
/// Chunk indices only.
// ANCHOR: classify_block
pub fn classify_block(q_chunk: usize, kv_chunk: usize) -> BlockKind {
    if kv_chunk > q_chunk {
        BlockKind::Skip
    } else if kv_chunk == q_chunk {
        BlockKind::Diagonal
    } else {
        BlockKind::Full
    }
}
// ANCHOR_END: classify_block
