//! How many tiles a chunked causal mask lets the kernel skip, predicted before the block
//! mask counts them.

/// The number of empty tiles of the chunked causal mask ([`crate::chunked`]) over
/// `tokens` queries and keys, in tiles of `tile`, when `chunk` is a multiple of `tile`.
///
/// Chunk boundaries then fall on tile boundaries, so a chunk of `m` tiles is a causal
/// block of its own, with `m·(m+1)/2` tiles on or below its diagonal; every other tile is
/// empty.
///
/// # Shapes
/// Counts only: `tile > 0`, `chunk` a positive multiple of `tile`.
// ANCHOR: predict_empty_tiles
pub fn predict_empty_tiles(tokens: usize, tile: usize, chunk: usize) -> usize {
    let tiles = tokens.div_ceil(tile);
    let visited: usize = (0..tokens)
        .step_by(chunk)
        .map(|start| {
            let m = chunk.min(tokens - start).div_ceil(tile); // tiles in this chunk
            m * (m + 1) / 2
        })
        .sum();
    tiles * tiles - visited
}
// ANCHOR_END: predict_empty_tiles
