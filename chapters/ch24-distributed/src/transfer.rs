//! Two ways to move keys and values: gather them all at once (PyTorch's default for
//! context parallelism, and Llama 3's choice), or pass them around the ring one block at a
//! time. Both send the same bytes; the gather holds every key at once and must finish
//! before attention starts, the ring holds two blocks and sends the next while it
//! attends to the current one.

use shared::{Result, Tensor};

use crate::ring::{
    Running, Shard, attend_step, finished, in_sequence_order, source_at,
};
use crate::setup::Sizes;
use crate::shards::Layout;

/// Bytes of keys and values one rank holds at once: every block after an all-gather, or
/// the block it attends to and the one arriving in a ring pass.
///
/// # Shapes
/// Counts only; `world` divides `sizes.tokens`.
pub fn kv_bytes_held(sizes: Sizes, world: usize, gathered: bool) -> u64 {
    let all = (2 * sizes.tokens * sizes.heads * sizes.head_dim * 4) as u64;
    if gathered {
        all
    } else {
        2 * all / world as u64
    }
}

/// Attention with keys and values all-gathered: each rank first receives every rank's
/// blocks, then attends to them in the ring's order, so its merges, and its bits, are the
/// ring's.
///
/// # Shapes
/// `q`, `k`, `v`: `[batch, heads, tokens, d]`; returns `[batch, heads, tokens, d]`.
pub fn all_gather_simulated(
    q: &Tensor, // [batch, heads, tokens, d]
    k: &Tensor, // [batch, heads, tokens, d]
    v: &Tensor, // [batch, heads, tokens, d]
    world: usize,
    layout: Layout,
) -> Result<Tensor> {
    // The all-gather: every rank receives all of these before any attention.
    let gathered = (0..world)
        .map(|r| {
            Ok((
                Shard::of_rank(k, layout, r, world)?,
                Shard::of_rank(v, layout, r, world)?,
            ))
        })
        .collect::<Result<Vec<(Shard, Shard)>>>()?;
    let mut outputs = Vec::with_capacity(world);
    for rank in 0..world {
        let queries = Shard::of_rank(q, layout, rank, world)?;
        let mut running: Running = vec![None; queries.chunks.len()];
        for step in 0..world {
            let (k_here, v_here) = &gathered[source_at(rank, step, world)];
            attend_step(&queries, k_here, v_here, &mut running)?;
        }
        outputs.push((queries.chunks, finished(running)?));
    }
    in_sequence_order(outputs)
}
