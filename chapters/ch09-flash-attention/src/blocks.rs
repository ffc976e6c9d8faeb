//! Which tiles of the score matrix a block of queries has to compute.
//!
//! Cut the `[queries, keys]` score matrix into tiles: rows in blocks of queries, columns
//! in blocks of keys. Under the causal mask, query `i` sees keys `0..=i` only (PyTorch's
//! `is_causal=True`: `tril(ones(queries, keys))`, the top-left corner). So a tile whose
//! first key comes after its last query is entirely `-∞`: its weights are all 0 and it
//! can be skipped, about half of all tiles for a long sequence. A tile that the diagonal
//! crosses is computed and masked; the tiles left of the diagonal need no mask at all.
//!
//! ```text
//!             keys →   block 0   block 1   block 2
//! queries 0..4         masked    skipped   skipped
//! queries 4..8         full      masked    skipped
//! queries 8..10        full      full      masked
//! ```

/// How many key blocks a block of queries ending (exclusively) at `query_end` must visit:
/// all `⌈keys / block⌉` without the mask; with it, only the blocks up to the one holding
/// the last visible key, key `query_end - 1`.
///
/// # Shapes
/// Counts only: `keys` is the number of keys, `block` the keys per block (`> 0`).
// ANCHOR: key_block_count
pub fn key_block_count(
    query_end: usize, // one past the last query of the block
    keys: usize,
    block: usize,
    causal: bool,
) -> usize {
    let visible_keys = if causal { query_end.min(keys) } else { keys };
    visible_keys.div_ceil(block)
}
// ANCHOR_END: key_block_count

/// Whether the tile of queries starting at `query_start` and keys ending (exclusively) at
/// `key_end` has masked entries: under the causal mask, when its last key comes after its
/// first query.
///
/// # Shapes
/// Indices only.
// ANCHOR: tile_needs_mask
pub fn tile_needs_mask(query_start: usize, key_end: usize, causal: bool) -> bool {
    causal && key_end > query_start + 1
}
// ANCHOR_END: tile_needs_mask
