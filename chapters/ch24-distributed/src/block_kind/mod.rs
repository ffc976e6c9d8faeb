//! What a causal step does with one block: a chunk of queries against a chunk of keys.
//! The decision is in `classify_block.rs` (an exercise).

#[cfg_attr(feature = "exercise", path = "../../exercises/classify_block.rs")]
mod classify_block;

pub use classify_block::classify_block;

/// How a chunk of queries meets a chunk of keys under the causal mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// Every key comes after every query: the block is skipped, no product computed.
    Skip,
    /// The same chunk: query `i` sees keys `0..=i` of it.
    Diagonal,
    /// Every key comes before every query: all of the block is seen.
    Full,
}
