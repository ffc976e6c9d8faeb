//! How much workgroup memory kernel 3's tiles take, and the largest tile that fits.

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/largest_tile_k_with_scores.rs"
)]
mod with_scores;
pub use with_scores::largest_tile_k_with_scores;

/// The bytes of workgroup memory kernel 3 needs for one tile of `tile_k` keys of `d`
/// features and their values of `d_v` features, in `f32`.
// ANCHOR: tile_bytes
pub fn tile_bytes(tile_k: usize, d: usize, d_v: usize) -> usize {
    4 * tile_k * (d + d_v)
}
// ANCHOR_END: tile_bytes

/// The largest power of two `tile_k <= max_k` whose tile ([`tile_bytes`]) fits in
/// `limit` bytes of workgroup memory; 0 if not even one key fits.
// ANCHOR: largest_tile_k
pub fn largest_tile_k(limit: usize, d: usize, d_v: usize, max_k: usize) -> usize {
    let mut tile_k = 1;
    if tile_bytes(tile_k, d, d_v) > limit || max_k == 0 {
        return 0;
    }
    while tile_k * 2 <= max_k && tile_bytes(tile_k * 2, d, d_v) <= limit {
        tile_k *= 2;
    }
    tile_k
}
// ANCHOR_END: largest_tile_k
