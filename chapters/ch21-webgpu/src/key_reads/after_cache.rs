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
    let keys = cached + queries;
    let visible = |i: usize| cached + i + 1;
    match kernel {
        // Every query row reads each key it sees, once.
        Kernel::Naive | Kernel::RowPerWorkgroup | Kernel::SplitKv { .. } => {
            (0..queries).map(visible).sum()
        }
        // Every workgroup copies the tiles up to its last query's last key, once.
        Kernel::Flash => (0..queries)
            .step_by(tiles.tile_q)
            .map(|q_start| {
                let last_query = (q_start + tiles.tile_q).min(queries) - 1;
                let seen = visible(last_query);
                (seen.div_ceil(tiles.tile_k) * tiles.tile_k).min(keys)
            })
            .sum(),
    }
}
