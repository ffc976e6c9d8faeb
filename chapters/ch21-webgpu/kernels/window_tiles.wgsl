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
    // The lowest key any query of the workgroup sees is its first query's lowest.
    let lowest = select(0u, first_query + 1u - window, first_query + 1u > window);
    let seen = min(last_query + 1u, keys);
    return vec2u(lowest / tile_k, (seen + tile_k - 1u) / tile_k);
}
