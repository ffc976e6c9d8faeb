//! What a causal step does with one block: a chunk of queries against a chunk of keys.

use crate::block::BlockKind;

/// The kind of the block of query chunk `q_chunk` and key chunk `kv_chunk` (chunks of
/// equal length, numbered along the sequence) under the causal mask.
///
/// # Shapes
/// Chunk indices only.
// ANCHOR: block_kind
pub fn block_kind(q_chunk: usize, kv_chunk: usize) -> BlockKind {
    if kv_chunk > q_chunk {
        BlockKind::Skip
    } else if kv_chunk == q_chunk {
        BlockKind::Diagonal
    } else {
        BlockKind::Full
    }
}
// ANCHOR_END: block_kind
