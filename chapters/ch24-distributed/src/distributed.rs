//! The chapter's steps across processes, on MPI: each process is one rank, started by
//! `mpirun -np W`. The attention is the same code as the one-process simulation
//! ([`attend_step`], [`causal_attention`], [`rank_partial`](crate::tensor_parallel::rank_partial)); only where the blocks come
//! from changes: here they arrive in messages.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use shared::{Result, Tensor, cat};

use crate::agree::check_agreed_sizes;
use ch17_inference::split_kv::Part;
use mpi::point_to_point::send_receive_replace_into;

use crate::ring::{Running, Shard, attend_step, finished, source_at};
use crate::ring_backward::{Grads, backward_step};
use crate::setup::Sizes;
use crate::shards::{Layout, chunk_len};
use crate::tensor_parallel::sum_in_rank_order;
use crate::training_step::Messages;
use crate::ulysses::{causal_attention, pieces};

/// This process's place among the ranks.
pub struct Ranks<'a> {
    /// Every rank.
    pub world: &'a SimpleCommunicator,
    /// This rank.
    pub rank: usize,
    /// How many ranks.
    pub size: usize,
}

impl<'a> Ranks<'a> {
    /// The ranks of `world`.
    ///
    /// # Shapes
    /// Counts only.
    pub fn of(world: &'a SimpleCommunicator) -> Ranks<'a> {
        Ranks {
            world,
            rank: world.rank() as usize,
            size: world.size() as usize,
        }
    }
}

/// Every rank's sizes gathered to every rank and checked the same way on each
/// ([`check_agreed_sizes`]): all ranks return the same verdict, before any attention
/// message is sent.
///
/// # Shapes
/// Counts only.
// ANCHOR: agree
pub fn agree_on_sizes(ranks: &Ranks, mine: Sizes) -> Result<Sizes> {
    let sent = [mine.tokens as u64, mine.heads as u64, mine.head_dim as u64];
    let mut all = vec![0u64; 3 * ranks.size];
    ranks.world.all_gather_into(&sent[..], &mut all[..]);
    let reported: Vec<Sizes> = all
        .chunks(3)
        .map(|s| Sizes {
            tokens: s[0] as usize,
            heads: s[1] as usize,
            head_dim: s[2] as usize,
        })
        .collect();
    check_agreed_sizes(&reported)
}
// ANCHOR_END: agree

/// What a ring pass measured on one rank.
#[derive(Clone, Copy, Debug, Default)]
pub struct RingTimes {
    /// Seconds spent attending.
    pub attending: f64,
    /// Seconds spent waiting for the next block after attending to this one.
    pub waiting: f64,
}

/// The numbers of a shard's blocks, one after another.
fn flat(shard: &Shard) -> Vec<f32> {
    shard.blocks.iter().flat_map(|b| b.to_vec()).collect()
}

/// A shard of `chunks`, each block `[1, heads, len, d]`, read back from `numbers`.
fn unflat(numbers: &[f32], chunks: Vec<usize>, block: [usize; 4]) -> Shard {
    let size = block.iter().product::<usize>();
    let blocks = numbers
        .chunks(size)
        .map(|b| Tensor::from_vec(b.to_vec(), &block))
        .collect();
    Shard { chunks, blocks }
}

/// Ring attention on this rank: its queries stay, keys and values pass to the next rank
/// while it attends to the ones it holds. Returns its output blocks, in its chunks' order.
///
/// # Shapes
/// `q`, `k`, `v`: this rank's shards, blocks `[1, heads, len, d]`.
// ANCHOR: ring
pub fn ring_attention(
    ranks: &Ranks,
    q: &Shard,
    k: &Shard,
    v: &Shard,
    layout: Layout,
) -> Result<(Running, RingTimes)> {
    let (rank, world) = (ranks.rank, ranks.size);
    let next = ranks.world.process_at_rank(((rank + 1) % world) as i32);
    let previous = ranks
        .world
        .process_at_rank(((rank + world - 1) % world) as i32);
    let block = q.blocks[0].dims::<4>();
    let mut here = [flat(k), flat(v)].concat(); // keys, then values
    let mut arriving = vec![0.0f32; here.len()];
    let mut running: Running = vec![None; q.chunks.len()];
    let mut times = RingTimes::default();
    for step in 0..world {
        let chunks = layout.chunks_of(source_at(rank, step, world), world);
        let (k_numbers, v_numbers) = here.split_at(here.len() / 2);
        let k_here = unflat(k_numbers, chunks.clone(), block);
        let v_here = unflat(v_numbers, chunks, block);
        let last = step + 1 == world;
        mpi::request::scope(|scope| -> Result<()> {
            // The next block travels while this one is attended to.
            let sending = (!last).then(|| next.immediate_send(scope, &here[..]));
            let receiving = (!last)
                .then(|| previous.immediate_receive_into(scope, &mut arriving[..]));
            let start = Instant::now();
            attend_step(q, &k_here, &v_here, &mut running)?;
            times.attending += start.elapsed().as_secs_f64();
            let start = Instant::now();
            if let Some(r) = receiving {
                r.wait();
            }
            if let Some(s) = sending {
                s.wait();
            }
            times.waiting += start.elapsed().as_secs_f64();
            Ok(())
        })?;
        if !last {
            std::mem::swap(&mut here, &mut arriving);
        }
    }
    Ok((running, times))
}
// ANCHOR_END: ring

/// The ring's backward on this rank, after its forward left `running`: the keys and
/// values travel again, now with their gradients, which each rank adds its share to; one
/// last pass brings every block's gradients home. Returns the gradients of this rank's
/// queries, keys and values, one block per chunk.
///
/// # Shapes
/// `q`, `k`, `v`, `grad_out`: this rank's shards, blocks `[1, heads, len, d]`.
// ANCHOR: ring_backward
pub fn ring_backward(
    ranks: &Ranks,
    [q, k, v]: [&Shard; 3],
    running: Running,
    grad_out: &Shard,
    layout: Layout,
) -> Result<[Vec<Tensor>; 3]> {
    let (rank, world) = (ranks.rank, ranks.size);
    let next = ranks.world.process_at_rank(((rank + 1) % world) as i32);
    let previous = ranks
        .world
        .process_at_rank(((rank + world - 1) % world) as i32);
    let block = q.blocks[0].dims::<4>();
    let whole: Vec<Part> = running.into_iter().flatten().collect();
    let mut grad_q = Grads::zeros_like(q);
    let zeros = vec![0.0f32; flat(k).len()];
    // Keys, values, and the gradients of both, travelling together.
    let mut here = [flat(k), flat(v), zeros.clone(), zeros].concat();
    let mut chunks = k.chunks.clone();
    for step in 0..world {
        let quarter = here.len() / 4;
        let [k_here, v_here, grad_k, grad_v] = [0, 1, 2, 3]
            .map(|n| unflat(&here[n * quarter..][..quarter], chunks.clone(), block));
        let (mut grad_k, mut grad_v) = (
            Grads {
                blocks: grad_k.blocks,
            },
            Grads {
                blocks: grad_v.blocks,
            },
        );
        backward_step(
            [q, &k_here, &v_here],
            &whole,
            grad_out,
            &mut grad_q,
            [&mut grad_k, &mut grad_v],
        )?;
        let grads = |g: &Grads| {
            g.blocks
                .iter()
                .flat_map(|b| b.to_vec())
                .collect::<Vec<f32>>()
        };
        here =
            [flat(&k_here), flat(&v_here), grads(&grad_k), grads(&grad_v)].concat();
        // Every step passes the block on; after the last, that pass brings it home.
        send_receive_replace_into(&mut here[..], &next, &previous);
        chunks = layout.chunks_of(source_at(rank, step + 1, world), world);
    }
    let quarter = here.len() / 4;
    let [grad_k, grad_v] = [2, 3].map(|n| {
        unflat(&here[n * quarter..][..quarter], k.chunks.clone(), block).blocks
    });
    Ok([grad_q.blocks, grad_k, grad_v])
}
// ANCHOR_END: ring_backward

/// Ring attention with keys and values all-gathered first: one collective, then the
/// ring's steps on blocks already here.
///
/// # Shapes
/// As [`ring_attention`].
pub fn all_gather_attention(
    ranks: &Ranks,
    q: &Shard,
    k: &Shard,
    v: &Shard,
    layout: Layout,
) -> Result<Vec<Tensor>> {
    let (rank, world) = (ranks.rank, ranks.size);
    let block = q.blocks[0].dims::<4>();
    let mine = [flat(k), flat(v)].concat();
    let mut all = vec![0.0f32; mine.len() * world];
    ranks.world.all_gather_into(&mine[..], &mut all[..]);
    let mut running: Running = vec![None; q.chunks.len()];
    for step in 0..world {
        let source = source_at(rank, step, world);
        let theirs = &all[source * mine.len()..][..mine.len()];
        let (k_numbers, v_numbers) = theirs.split_at(mine.len() / 2);
        let chunks = layout.chunks_of(source, world);
        let k_here = unflat(k_numbers, chunks.clone(), block);
        let v_here = unflat(v_numbers, chunks, block);
        attend_step(q, &k_here, &v_here, &mut running)?;
    }
    finished(running)
}

/// An all-to-all of equal pieces: `sent[j]` goes to rank `j`; returns what each rank
/// sent here, in rank order, each of shape `piece`.
fn all_to_all(ranks: &Ranks, sent: &[Tensor], piece: &[usize]) -> Vec<Tensor> {
    let numbers: Vec<f32> = sent.iter().flat_map(|t| t.to_vec()).collect();
    let mut received = vec![0.0f32; numbers.len()];
    ranks.world.all_to_all_into(&numbers[..], &mut received[..]);
    let size = numbers.len() / ranks.size;
    received
        .chunks(size)
        .map(|c| Tensor::from_vec(c.to_vec(), piece))
        .collect()
}

/// Ulysses on this rank: its tokens of every head become every token of its heads, it
/// attends, and the tokens go home.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, heads, tokens / W, d]`, this rank's tokens; returns the same
/// shape.
// ANCHOR: ulysses
pub fn ulysses(ranks: &Ranks, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Tensor> {
    let world = ranks.size;
    let [b, heads, len, d] = q.dims::<4>();
    let to_heads = |t: &Tensor| {
        let received =
            all_to_all(ranks, &pieces(t, 1, world), &[b, heads / world, len, d]);
        cat(&received, 2) // every token of my heads
    };
    let out = causal_attention(&to_heads(q), &to_heads(k), &to_heads(v))?;
    let back =
        all_to_all(ranks, &pieces(&out, 2, world), &[b, heads / world, len, d]);
    Ok(cat(&back, 1)) // my tokens of every head
}
// ANCHOR_END: ulysses

/// The partial outputs of tensor-parallel heads added two ways: by MPI's all-reduce, in
/// the library's order, and gathered to every rank then added in rank order.
///
/// # Shapes
/// `partial`: `[tokens, d_model]`; returns two of the same shape.
// ANCHOR: reduce
pub fn reduce_both_ways(ranks: &Ranks, partial: &Tensor) -> (Tensor, Tensor) {
    let shape = partial.sizes().to_vec();
    let mine = partial.to_vec();
    let mut reduced = vec![0.0f32; mine.len()];
    ranks
        .world
        .all_reduce_into(&mine[..], &mut reduced[..], SystemOperation::sum());
    let mut all = vec![0.0f32; mine.len() * ranks.size];
    ranks.world.all_gather_into(&mine[..], &mut all[..]);
    let partials: Vec<Tensor> = all
        .chunks(mine.len())
        .map(|p| Tensor::from_vec(p.to_vec(), &shape))
        .collect();
    (
        Tensor::from_vec(reduced, &shape),
        sum_in_rank_order(&partials),
    )
}
// ANCHOR_END: reduce

/// Numbers gathered to rank 0 from every rank, equal counts: rank 0 gets them all in rank
/// order, the others an empty list.
///
/// # Shapes
/// `mine`: the same length on every rank.
pub fn gather_to_root<T: Equivalence + Default + Clone>(
    ranks: &Ranks,
    mine: &[T],
) -> Vec<T> {
    let root = ranks.world.process_at_rank(0);
    if ranks.rank == 0 {
        let mut all = vec![T::default(); mine.len() * ranks.size];
        root.gather_into_root(mine, &mut all[..]);
        all
    } else {
        root.gather_into(mine);
        Vec::new()
    }
}

/// This rank's shards under `layout`, of the whole `q`, `k`, `v`.
///
/// # Shapes
/// `[1, heads, tokens, d]` each; blocks `[1, heads, len, d]`.
pub fn shards_of(
    ranks: &Ranks,
    [q, k, v]: [&Tensor; 3],
    layout: Layout,
) -> Result<[Shard; 3]> {
    chunk_len(q.size(2), ranks.size, layout)?;
    Ok([
        Shard::of_rank(q, layout, ranks.rank, ranks.size)?,
        Shard::of_rank(k, layout, ranks.rank, ranks.size)?,
        Shard::of_rank(v, layout, ranks.rank, ranks.size)?,
    ])
}

/// The training step's messages on MPI: this process runs one rank; the ring passes its
/// blocks to the next process ([`ring_attention`], [`ring_backward`]), and a gather is
/// MPI's all-gather.
// ANCHOR: messages
impl Messages for Ranks<'_> {
    fn world(&self) -> usize {
        self.size
    }

    fn ranks_here(&self) -> Vec<usize> {
        vec![self.rank]
    }

    fn ring_attention(
        &self,
        qkv: &[[Shard; 3]],
        layout: Layout,
    ) -> Result<Vec<Running>> {
        let [q, k, v] = &qkv[0];
        let (running, _) = ring_attention(self, q, k, v, layout)?;
        Ok(vec![running])
    }

    fn ring_backward(
        &self,
        qkv: &[[Shard; 3]],
        running: Vec<Running>,
        grad_out: &[Shard],
        layout: Layout,
    ) -> Result<Vec<[Vec<Tensor>; 3]>> {
        let [q, k, v] = &qkv[0];
        let running = running.into_iter().next().unwrap_or_default();
        Ok(vec![ring_backward(
            self,
            [q, k, v],
            running,
            &grad_out[0],
            layout,
        )?])
    }

    fn all_gather(&self, rows: &[Tensor]) -> Result<Vec<Tensor>> {
        let mine = rows[0].to_vec();
        let mut all = vec![0.0f32; mine.len() * self.size];
        self.world.all_gather_into(&mine[..], &mut all[..]);
        Ok(all
            .chunks(mine.len())
            .map(|theirs| Tensor::from_vec(theirs.to_vec(), rows[0].sizes()))
            .collect())
    }
}
// ANCHOR_END: messages
