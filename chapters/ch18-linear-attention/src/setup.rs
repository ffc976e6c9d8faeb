//! The chapter's sizes: its sequences, chunks, indexer and tiles, and the lengths and pair
//! counts its memory and recall steps print.

/// Tokens of the chapter's sequences.
pub const T: usize = 64;
/// Features of every query, key and value.
pub const D: usize = 16;
/// Tokens of one chunk in the chunked forms.
pub const CHUNK: usize = 16;
/// Tokens of the sparse-attention example (the first of the chapter's sequence).
pub const T_SPARSE: usize = 16;
/// The indexer's heads.
pub const INDEX_HEADS: usize = 2;
/// The indexer's features per head.
pub const D_INDEX: usize = 8;
/// Keys each query keeps.
pub const TOP_K: usize = 4;
/// Queries and keys per tile of the tiled sparse attention (chapter 16's tiles).
pub const TILE: usize = 4;
/// Tiles of keys each tile of queries keeps, in block selection.
pub const TOP_TILES: usize = 2;
/// Sequence lengths at which the hybrid stack's memory is counted.
pub const HYBRID_LENGTHS: [usize; 3] = [64, 1024, 32768];
/// How many key–value pairs the recall experiment writes, one row each.
pub const RECALL_PAIRS: [usize; 6] = [4, 8, 16, 32, 64, 128];
