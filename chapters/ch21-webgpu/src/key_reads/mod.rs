//! How many times each kernel reads a key from global memory: the count that tiling
//! lowers.

use crate::kernels::Kernel;
use crate::tiles::TileSizes;

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/key_reads_after_cache.rs"
)]
mod after_cache;
pub use after_cache::key_reads_after_cache;

/// How many keys (rows of `k`, `d` floats each) `kernel` reads from global memory for one
/// head of `queries` queries over `keys` keys, with the causal mask if `causal`
/// (query `i` sees keys `0..=i`), kernel 3 with the tiles of `tiles`.
// ANCHOR: key_reads
pub fn key_reads(
    kernel: Kernel,
    queries: usize,
    keys: usize,
    causal: bool,
    tiles: TileSizes,
) -> usize {
    let visible = |i: usize| if causal { (i + 1).min(keys) } else { keys };
    match kernel {
        // Every query row reads each key it sees, once.
        Kernel::Naive | Kernel::RowPerWorkgroup | Kernel::SplitKv { .. } => {
            (0..queries).map(visible).sum()
        }
        // Every workgroup copies each tile it visits into workgroup memory, once, for
        // all its queries.
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
// ANCHOR_END: key_reads
