//! A rank's tokens, for the parts of a model that work token by token (the embedding,
//! the norms, the projections, RoPE, the feed-forward network, the head): which
//! positions a rank holds, its rows of a `[batch, tokens, ..]` tensor, and every rank's
//! rows put back in sequence order. The chunks are the ring's ([`Layout`]), so the
//! queries, keys and values a rank makes from its rows are the shard the ring expects.

use shared::{Element, Result, Tensor, cat};

use crate::ring::{Shard, in_chunk_order};
use crate::shards::{Layout, chunk_len};

/// The positions of the tokens rank `rank` of `world` holds, in its chunks' order: with
/// zigzag shards, a run from the front of the sequence and its mirror from the back.
///
/// # Shapes
/// Counts only; `tokens` must split into the layout's chunks.
pub fn positions_of(
    tokens: usize,
    rank: usize,
    world: usize,
    layout: Layout,
) -> Result<Vec<usize>> {
    let len = chunk_len(tokens, world, layout)?;
    Ok(layout
        .chunks_of(rank, world)
        .into_iter()
        .flat_map(|chunk| chunk * len..(chunk + 1) * len)
        .collect())
}

/// Rank `rank`'s rows of `t`: its chunks of the sequence, one after another.
///
/// # Shapes
/// `t`: `[batch, tokens, ..]`; returns `[batch, tokens / world, ..]`.
pub fn rows_of<E: Element>(
    t: &Tensor<E>,
    rank: usize,
    world: usize,
    layout: Layout,
) -> Result<Tensor<E>> {
    let len = chunk_len(t.size(1), world, layout)?;
    let chunks: Vec<Tensor<E>> = layout
        .chunks_of(rank, world)
        .into_iter()
        .map(|chunk| t.narrow(1, chunk * len, len))
        .collect();
    Ok(cat(&chunks, 1))
}

/// Every rank's rows, given in rank order, put back in sequence order: the inverse of
/// [`rows_of`].
///
/// # Shapes
/// `rows`: one `[batch, tokens / world, ..]` per rank; returns `[batch, tokens, ..]`.
pub fn in_token_order(rows: &[Tensor], layout: Layout) -> Tensor {
    let world = rows.len();
    let outputs = rows
        .iter()
        .enumerate()
        .map(|(rank, t)| {
            let chunks = layout.chunks_of(rank, world);
            let len = t.size(1) / chunks.len();
            let blocks = (0..chunks.len())
                .map(|i| t.narrow(1, i * len, len))
                .collect();
            (chunks, blocks)
        })
        .collect();
    in_chunk_order(outputs, 1)
}

/// A rank's heads, its tokens in its chunks' order, cut into the blocks of the ring's
/// shard.
///
/// # Shapes
/// `t`: `[batch, heads, tokens / world, d]`; blocks `[batch, heads, len, d]`, one per
/// chunk.
pub fn shard_of_heads(t: &Tensor, chunks: &[usize]) -> Shard {
    let len = t.size(2) / chunks.len();
    Shard {
        chunks: chunks.to_vec(),
        blocks: (0..chunks.len())
            .map(|i| t.narrow(2, i * len, len).contiguous())
            .collect(),
    }
}
