//! Kernel 3 with its scores in workgroup memory instead of registers: a smaller tile.

use super::tile_bytes;

/// The largest power of two `tile_k <= max_k` for a kernel 3 that keeps, besides a
/// tile of `tile_k` keys of `d` features and their values of `d_v`, the scores of its
/// `tile_q` queries against the tile (`tile_q · tile_k` floats) in `limit` bytes of
/// workgroup memory; 0 if not even one key fits.
pub fn largest_tile_k_with_scores(
    limit: usize,
    d: usize,
    d_v: usize,
    tile_q: usize,
    max_k: usize,
) -> usize {
    let fits = |tile_k: usize| {
        tile_k <= max_k && tile_bytes(tile_k, d, d_v) + 4 * tile_q * tile_k <= limit
    };
    if !fits(1) {
        return 0;
    }
    let mut tile_k = 1;
    while fits(2 * tile_k) {
        tile_k *= 2;
    }
    tile_k
}
