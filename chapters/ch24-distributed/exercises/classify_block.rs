//! The kind of one block under the causal mask.

use super::BlockKind;

/// The kind of the block of query chunk `q_chunk` and key chunk `kv_chunk` (chunks of
/// equal length, numbered along the sequence) under the causal mask.
///
/// # Shapes
/// Chunk indices only.
pub fn classify_block(q_chunk: usize, kv_chunk: usize) -> BlockKind {
    // TODO: a query sees the keys at its own position and before. Which chunks of keys
    // does a chunk of queries see all of, some of, none of?
    let _ = (q_chunk, kv_chunk);
    todo!("classify_block: skip, diagonal or full")
}
