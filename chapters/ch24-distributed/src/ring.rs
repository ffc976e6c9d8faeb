//! Ring attention (Liu, Zaharia and Abbeel, "Ring Attention with Blockwise Transformers
//! for Near-Infinite Context"): each rank keeps its queries, and the keys and values move
//! from rank to rank around a ring. At step `s` rank `r` holds the keys and values of rank
//! `r - s` (modulo the ranks); it attends its queries to them and merges the result into
//! what it has so far by their log-sum-exps, chapter 17's merge. After `W` steps every
//! query has met every key, and no rank ever held more than two blocks of keys.
//!
//! The work of one rank at one step is [`attend_step`]; the processes of the `mpi`
//! feature call it as they receive blocks, and [`ring_attention_simulated`] calls it for
//! every rank in one process, in the same order, so both give the same bits.

use ch17_inference::split_kv::{Part, merge_parts};
use shared::{Result, Tensor, cat};

use crate::block::attend_block;
use crate::shards::{Layout, chunk_len};

/// The chunks one rank holds of a `[batch, heads, tokens, d]` tensor, in `chunks`' order.
#[derive(Clone, Debug)]
pub struct Shard {
    /// Chunk indices along the sequence.
    pub chunks: Vec<usize>,
    /// One `[batch, heads, len, d]` tensor per chunk.
    pub blocks: Vec<Tensor>,
}

impl Shard {
    /// Chunks `chunks` of `len` tokens each of `t`.
    ///
    /// # Shapes
    /// `t`: `[batch, heads, tokens, d]`; each block `[batch, heads, len, d]`.
    pub fn of(t: &Tensor, chunks: &[usize], len: usize) -> Shard {
        let blocks = chunks
            .iter()
            .map(|&c| t.narrow(2, c * len, len).contiguous())
            .collect();
        Shard {
            chunks: chunks.to_vec(),
            blocks,
        }
    }

    /// The shard of rank `rank` of `world` under `layout`.
    ///
    /// # Shapes
    /// As [`Shard::of`]; `tokens` splits into `layout.chunks(world)` chunks.
    pub fn of_rank(
        t: &Tensor,
        layout: Layout,
        rank: usize,
        world: usize,
    ) -> Result<Shard> {
        let len = chunk_len(t.size(2), world, layout)?;
        Ok(Shard::of(t, &layout.chunks_of(rank, world), len))
    }
}

/// What one rank has merged so far: one partial result per query chunk, `None` until a
/// block of keys that chunk may see has arrived.
pub type Running = Vec<Option<Part>>;

/// One step of one rank: its query chunks `q` attend to the key and value chunks that are
/// here now, and each block's result is merged into `running` by its log-sum-exp. Blocks
/// the causal mask hides are skipped.
///
/// # Shapes
/// All blocks `[batch, heads, len, d]`; `k` and `v` hold the same chunks; `running` one
/// entry per query chunk.
// ANCHOR: attend_step
pub fn attend_step(
    q: &Shard,
    k: &Shard,
    v: &Shard,
    running: &mut Running,
) -> Result<()> {
    for ((&q_chunk, q_block), so_far) in q.chunks.iter().zip(&q.blocks).zip(running) {
        for ((&kv_chunk, k_block), v_block) in
            k.chunks.iter().zip(&k.blocks).zip(&v.blocks)
        {
            let Some(part) =
                attend_block(q_block, k_block, v_block, q_chunk, kv_chunk)?
            else {
                continue;
            };
            *so_far = Some(match so_far.take() {
                None => part,
                Some(before) => merge_parts(&[before, part])?,
            });
        }
    }
    Ok(())
}
// ANCHOR_END: attend_step

/// The rank whose keys and values rank `rank` holds at step `step` of a ring of `world`.
///
/// # Shapes
/// Counts only.
pub fn source_at(rank: usize, step: usize, world: usize) -> usize {
    (rank + world - step % world) % world
}

/// A whole ring as one process runs it: every rank's steps in ring order, each step
/// calling `on_step(rank, step, running)` after its merge, and the ranks' outputs put back
/// in sequence order.
///
/// # Shapes
/// `q`, `k`, `v`: `[batch, heads, tokens, d]`; returns `[batch, heads, tokens, d]`.
// ANCHOR: simulated
pub fn ring_attention_simulated(
    q: &Tensor, // [batch, heads, tokens, d]
    k: &Tensor, // [batch, heads, tokens, d]
    v: &Tensor, // [batch, heads, tokens, d]
    world: usize,
    layout: Layout,
    mut on_step: impl FnMut(usize, usize, &Running),
) -> Result<Tensor> {
    let mut outputs = Vec::with_capacity(world);
    for rank in 0..world {
        let queries = Shard::of_rank(q, layout, rank, world)?;
        let mut running: Running = vec![None; queries.chunks.len()];
        for step in 0..world {
            // What the ring has brought to this rank by now.
            let source = source_at(rank, step, world);
            let k_here = Shard::of_rank(k, layout, source, world)?;
            let v_here = Shard::of_rank(v, layout, source, world)?;
            attend_step(&queries, &k_here, &v_here, &mut running)?;
            on_step(rank, step, &running);
        }
        outputs.push((queries.chunks, finished(running)?));
    }
    in_sequence_order(outputs)
}
// ANCHOR_END: simulated

/// The outputs of a rank's query chunks after the last step.
///
/// # Shapes
/// Each `[batch, heads, len, d]`.
pub fn finished(running: Running) -> Result<Vec<Tensor>> {
    running
        .into_iter()
        .map(|part| {
            part.map(|p| p.out)
                .ok_or_else(|| shared::Error::InvalidArgument {
                    op: "ring_attention",
                    detail: "a chunk of queries met no key".into(),
                })
        })
        .collect()
}

/// Every rank's output chunks, `(chunk indices, blocks)`, joined along the sequence in
/// chunk order.
///
/// # Shapes
/// Blocks `[batch, heads, len, d]`; returns `[batch, heads, chunks · len, d]`.
pub fn in_sequence_order(outputs: Vec<(Vec<usize>, Vec<Tensor>)>) -> Result<Tensor> {
    Ok(in_chunk_order(outputs, 2))
}

/// Blocks of chunks, `(chunk indices, blocks)` from every rank, joined along `dim` in
/// chunk order.
///
/// # Shapes
/// Blocks of one shape but for `dim`; returns the blocks' shape with `dim` their sum.
pub fn in_chunk_order(outputs: Vec<(Vec<usize>, Vec<Tensor>)>, dim: i64) -> Tensor {
    let mut placed: Vec<(usize, Tensor)> = outputs
        .into_iter()
        .flat_map(|(chunks, blocks)| chunks.into_iter().zip(blocks))
        .collect();
    placed.sort_by_key(|(chunk, _)| *chunk);
    let blocks: Vec<Tensor> = placed.into_iter().map(|(_, b)| b).collect();
    cat(&blocks, dim)
}
