//! Exercise: predict how many tiles a chunked causal mask skips. Replace the `todo!()`;
//! test with
//! `cargo test -p ch16-flex-attention --features exercise --test exercises exercise_empty_tiles`.

/// The number of empty tiles of the chunked causal mask over `tokens` queries and keys,
/// in tiles of `tile`, when `chunk` is a multiple of `tile`.
///
/// # Shapes
/// Counts only: `tile > 0`, `chunk` a positive multiple of `tile`.
pub fn predict_empty_tiles(tokens: usize, tile: usize, chunk: usize) -> usize {
    // TODO: draw the grid of tiles for 16 tokens, tiles of 4 and chunks of 8 first. Which
    // tiles can hold a visible entry? Count those per chunk, then subtract from all tiles.
    let _ = (tokens, tile, chunk);
    todo!("predict_empty_tiles")
}
