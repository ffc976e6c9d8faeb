// How many tiles of `tile_k` keys a workgroup whose last query is `last_query`
// visits: every tile that holds a key some query of the workgroup sees. Without the
// mask that is every tile; under the causal mask the tiles after key `last_query` are
// skipped.
fn key_tiles(last_query: u32, keys: u32, tile_k: u32, causal: bool) -> u32 {
    // TODO: the number of tiles that hold a key the workgroup's queries see: all
    // `keys` without the mask, keys 0..=last_query (at most `keys`) under the causal
    // mask.
    return 0u;
}
