//! How much workgroup memory kernel 3's tiles take, and the largest tile that fits.

/// The bytes of workgroup memory kernel 3 needs for one tile of `tile_k` keys of `d`
/// features and their values of `d_v` features, in `f32`.
pub fn tile_bytes(tile_k: usize, d: usize, d_v: usize) -> usize {
    // TODO: the bytes of a tile of keys and a tile of values, 4 bytes a float.
    let _ = (tile_k, d, d_v);
    todo!("the bytes of one tile")
}

/// The largest power of two `tile_k <= max_k` whose tile ([`tile_bytes`]) fits in
/// `limit` bytes of workgroup memory; 0 if not even one key fits.
pub fn largest_tile_k(limit: usize, d: usize, d_v: usize, max_k: usize) -> usize {
    // TODO: the largest power of two up to max_k whose tile fits in limit bytes.
    let _ = (limit, d, d_v, max_k);
    todo!("the largest tile that fits")
}
