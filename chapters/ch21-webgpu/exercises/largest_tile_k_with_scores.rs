//! Kernel 3 with its scores in workgroup memory instead of registers: a smaller tile.

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
    // TODO: the bytes of a tile of keys and values (`super::tile_bytes`) and of the
    // workgroup's scores against it, 4 bytes a float; then the largest power of two
    // up to `max_k` whose bytes fit in `limit`.
    let _ = (limit, d, d_v, tile_q, max_k);
    todo!("the largest tile that fits beside its scores")
}
