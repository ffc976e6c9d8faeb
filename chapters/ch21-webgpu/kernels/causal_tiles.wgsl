// How many tiles of TILE_K keys a workgroup whose last query is `last_query` visits:
// every tile that holds a key some query of the workgroup sees. Without the mask that
// is every tile; under the causal mask the tiles after key `last_query` are skipped.
fn key_tiles(last_query: u32, keys: u32, tile_k: u32, causal: bool) -> u32 {
    var seen = keys;
    if causal {
        seen = min(last_query + 1u, keys);
    }
    return (seen + tile_k - 1u) / tile_k;
}
