// The tiles of `tile_k` keys a workgroup of queries first_query..=last_query visits
// under a sliding window of `window` keys, query i seeing keys i + 1 - window ..= i
// (from 0): the first tile and the end, one past the last. (first_query <= last_query
// < keys, window >= 1.)
fn window_tiles(
    first_query: u32,
    last_query: u32,
    keys: u32,
    tile_k: u32,
    window: u32,
) -> vec2u {
    // TODO: the first tile that holds a key some query of the workgroup sees, and one
    // past the last such tile. Which query sees the lowest key, and which the
    // highest?
    return vec2u(0u, 0u);
}
