//! How many times each kernel reads a key from global memory: the count that tiling
//! lowers.

use crate::kernels::Kernel;
use crate::tiles::TileSizes;

/// How many keys (rows of `k`, `d` floats each) `kernel` reads from global memory for one
/// head of `queries` queries over `keys` keys, with the causal mask if `causal`
/// (query `i` sees keys `0..=i`), kernel 3 with the tiles of `tiles`.
pub fn key_reads(
    kernel: Kernel,
    queries: usize,
    keys: usize,
    causal: bool,
    tiles: TileSizes,
) -> usize {
    // TODO: kernels 1, 2 and 4 read every key a query row sees once per row; kernel 3
    // copies each tile of keys its workgroup visits once per workgroup of `tiles.tile_q`
    // queries (a last tile stops at the last key). Count the keys read.
    let _ = (kernel, queries, keys, causal, tiles);
    todo!("count the keys each kernel reads from global memory")
}
