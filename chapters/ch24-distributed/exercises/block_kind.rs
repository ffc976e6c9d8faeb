//! What a causal step does with one block: a chunk of queries against a chunk of keys.

use crate::block::BlockKind;

/// The kind of the block of query chunk `q_chunk` and key chunk `kv_chunk` (chunks of
/// equal length, numbered along the sequence) under the causal mask.
///
/// # Shapes
/// Chunk indices only.
pub fn block_kind(q_chunk: usize, kv_chunk: usize) -> BlockKind {
    // TODO: a query sees the keys at its own position and before. Which chunks of keys
    // does a chunk of queries see all of, some of, none of?
    let _ = (q_chunk, kv_chunk);
    todo!("block_kind: skip, diagonal or full")
}
