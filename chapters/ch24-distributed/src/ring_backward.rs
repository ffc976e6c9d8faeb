//! The ring's backward pass. The forward left, on every rank, each query chunk's whole
//! output `O` and log-sum-exp `L`. The backward walks the same ring: at each step a rank
//! meets a block of keys and values, and chapter 16's tiled backward, given the whole
//! `O` and `L`, gives that block's share of the gradients: it adds into its own queries'
//! gradient, and into gradients of the block's keys and values that travel around the
//! ring with the block, each rank adding its share as the block passes, until they come
//! home.

use ch16_flex_attention::backward::unchanged_grad;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel_backward::flex_kernel_backward_given;
use ch16_flex_attention::recipes::{causal, no_mask, unchanged};
use ch17_inference::split_kv::Part;
use shared::{Result, Tensor};

use crate::block_kind::{BlockKind, classify_block};
use crate::ring::{
    Running, Shard, in_sequence_order, ring_attention_simulated, source_at,
};
use crate::setup::TILE;
use crate::shards::Layout;

/// One block's share of the gradients of its queries, keys and values, given the whole
/// output and log-sum-exps of the queries; `None` for a block the causal mask hides.
///
/// # Shapes
/// `q`, `k`, `v`, `out`, `grad_out`: `[batch, heads, len, d]`; `lse`: `[batch, heads,
/// len]`. Returns three `[batch, heads, len, d]`.
fn backward_block(
    [q, k, v]: [&Tensor; 3],
    whole: &Part,
    grad_out: &Tensor,
    q_chunk: usize,
    kv_chunk: usize,
) -> Result<Option<[Tensor; 3]>> {
    let given = |mask_mod: fn(usize, usize, usize, usize) -> bool| {
        let [_, _, queries, _] = q.dims();
        let block_mask = BlockMask::new(mask_mod, 1, 1, queries, k.size(2), TILE)?;
        let (grads, _) = flex_kernel_backward_given(
            [q, k, v],
            [&whole.out, &whole.lse],
            grad_out,
            &block_mask,
            unchanged,
            unchanged_grad,
            mask_mod,
        )?;
        Ok(Some([grads.q, grads.k, grads.v]))
    };
    match classify_block(q_chunk, kv_chunk) {
        BlockKind::Skip => Ok(None),
        BlockKind::Diagonal => given(causal),
        BlockKind::Full => given(no_mask),
    }
}

/// The gradients a rank adds to: its queries', and those of the keys and values passing
/// through, one tensor per chunk.
#[derive(Clone, Debug)]
pub struct Grads {
    /// One per chunk, `[batch, heads, len, d]`.
    pub blocks: Vec<Tensor>,
}

impl Grads {
    /// Zeros shaped as `shard`'s blocks.
    ///
    /// # Shapes
    /// As `shard`.
    pub fn zeros_like(shard: &Shard) -> Grads {
        let blocks = shard
            .blocks
            .iter()
            .map(|b| Tensor::from_vec(vec![0.0; b.numel()], b.sizes()))
            .collect();
        Grads { blocks }
    }
}

/// One backward step of one rank: its query chunks `q` (whose whole forward results are
/// `whole`) meet the key and value chunks here; each block's share is added to `grad_q`
/// and to the travelling `grad_k`, `grad_v`.
///
/// # Shapes
/// All blocks `[batch, heads, len, d]`; `whole` and `grad_out` one per query chunk.
// ANCHOR: backward_step
pub fn backward_step(
    [q, k, v]: [&Shard; 3],
    whole: &[Part],
    grad_out: &Shard,
    grad_q: &mut Grads,
    [grad_k, grad_v]: [&mut Grads; 2],
) -> Result<()> {
    for (i, &q_chunk) in q.chunks.iter().enumerate() {
        for (j, &kv_chunk) in k.chunks.iter().enumerate() {
            let blocks = [&q.blocks[i], &k.blocks[j], &v.blocks[j]];
            let Some([dq, dk, dv]) = backward_block(
                blocks,
                &whole[i],
                &grad_out.blocks[i],
                q_chunk,
                kv_chunk,
            )?
            else {
                continue;
            };
            grad_q.blocks[i] = &grad_q.blocks[i] + &dq;
            grad_k.blocks[j] = &grad_k.blocks[j] + &dk;
            grad_v.blocks[j] = &grad_v.blocks[j] + &dv;
        }
    }
    Ok(())
}
// ANCHOR_END: backward_step

/// The ring's forward and backward in one process: the forward as
/// [`ring_attention_simulated`], then every step of every rank in ring order, the
/// travelling gradients of rank `s`'s keys and values added to by rank `s`, then `s + 1`,
/// and so on, as they would be on the ring.
///
/// # Shapes
/// `q`, `k`, `v`, `grad_out`: `[batch, heads, tokens, d]`; returns the gradients of `q`,
/// `k`, `v`, the same shapes.
pub fn ring_backward_simulated(
    [q, k, v]: [&Tensor; 3],
    grad_out: &Tensor,
    world: usize,
    layout: Layout,
) -> Result<[Tensor; 3]> {
    // The forward, keeping each rank's whole results after its last step.
    let mut whole: Vec<Vec<Part>> = vec![Vec::new(); world];
    ring_attention_simulated(
        q,
        k,
        v,
        world,
        layout,
        |rank, step, running: &Running| {
            if step + 1 == world {
                whole[rank] = running.iter().flatten().cloned().collect();
            }
        },
    )?;
    let shards = |t: &Tensor| {
        (0..world)
            .map(|r| Shard::of_rank(t, layout, r, world))
            .collect::<Result<Vec<Shard>>>()
    };
    let (qs, ks, vs, gs) = (shards(q)?, shards(k)?, shards(v)?, shards(grad_out)?);
    let mut grad_q: Vec<Grads> = qs.iter().map(Grads::zeros_like).collect();
    let mut grad_k: Vec<Grads> = ks.iter().map(Grads::zeros_like).collect();
    let mut grad_v: Vec<Grads> = vs.iter().map(Grads::zeros_like).collect();
    for step in 0..world {
        for rank in 0..world {
            let source = source_at(rank, step, world);
            backward_step(
                [&qs[rank], &ks[source], &vs[source]],
                &whole[rank],
                &gs[rank],
                &mut grad_q[rank],
                [&mut grad_k[source], &mut grad_v[source]],
            )?;
        }
    }
    let joined = |grads: Vec<Grads>| {
        let outputs = grads
            .into_iter()
            .enumerate()
            .map(|(r, g)| (layout.chunks_of(r, world), g.blocks))
            .collect();
        in_sequence_order(outputs)
    };
    Ok([joined(grad_q)?, joined(grad_k)?, joined(grad_v)?])
}
