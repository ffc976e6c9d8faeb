//! The keys read by a prefill that comes after a cache: a chunk of new queries whose
//! tokens follow the cached ones.

use crate::kernels::Kernel;
use crate::tiles::TileSizes;

/// How many keys `kernel` reads from global memory for one head when `queries` new
/// tokens follow `cached` tokens already in the cache: query `i` of the chunk is
/// token `cached + i`, and under the causal mask it sees keys `0..=cached + i` of the
/// `cached + queries`; kernel 3 with the tiles of `tiles`, its workgroups visiting
/// every tile that holds a key one of their queries sees.
pub fn key_reads_after_cache(
    kernel: Kernel,
    queries: usize,
    cached: usize,
    tiles: TileSizes,
) -> usize {
    // TODO: count the keys read from global memory. Kernels 1, 2 and 4 read every key
    // a query row sees, once per row; kernel 3 copies every tile its workgroup of
    // `tiles.tile_q` queries visits, once per workgroup (a last tile stops at the
    // last key). Which keys does query `i` of the chunk see?
    let _ = (kernel, queries, cached, tiles);
    todo!("the keys each kernel reads when the queries follow a cache")
}
