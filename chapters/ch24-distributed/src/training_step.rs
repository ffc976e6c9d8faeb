//! A training step of chapter 22's Llama with its sequence cut across ranks. Each rank
//! holds the whole model and its own tokens of the batch; it runs the parts that work
//! token by token on its rows, and the attention core by the ring, forward and back
//! (the keys' and values' gradients travel back around it). The sums over the sequence,
//! the loss's mean and every weight's gradient, are then taken from every token's
//! pieces, gathered on every rank in sequence order ([`crate::sequence_sums`]): each
//! rank computes the same gradients, bit for bit those of one process running every
//! rank's steps, and applies the same AdamW update.
//!
//! The step is written once, for the ranks this process runs: all of them in the
//! one-process simulation ([`OneProcess`]), one under `mpirun` (the `mpi` feature's
//! `distributed::Ranks`). Only the [`Messages`] differ.

use ch11_training::adamw::AdamW;
use ch19_induction_heads::arithmetic::Arithmetic as _;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::arithmetic::Arithmetic;
use ch22_pretraining::batches::Batch;
use ch22_pretraining::model::llama::Llama;
use ch22_pretraining::model::{Model, tied_head};
use ch22_pretraining::train::{Settings, apply_gradients};
use shared::nn::Linear;
use shared::{Error, Result, Tensor};

use crate::layer_on_rank::{
    RankTape, after_ring, backward_after_ring, backward_before_ring, before_ring,
};
use crate::rank_tokens::{in_token_order, positions_of, rows_of};
use crate::ring::{Running, Shard, in_sequence_order, ring_attention_simulated};
use crate::ring_backward::ring_backward_simulated;
use crate::sequence_sums::{EndRows, LayerRows, gradients_from_rows};
use crate::shards::Layout;

/// The messages of a step across ranks, for the ranks this process runs.
pub trait Messages {
    /// Ranks in all.
    fn world(&self) -> usize;

    /// The ranks this process runs, in order.
    fn ranks_here(&self) -> Vec<usize>;

    /// Ring attention: for each rank here, its queries, keys and values; returns each
    /// one's merged result.
    ///
    /// # Shapes
    /// Blocks `[batch, heads, len, head_dim]`.
    fn ring_attention(
        &self,
        qkv: &[[Shard; 3]],
        layout: Layout,
    ) -> Result<Vec<Running>>;

    /// The ring's backward: for each rank here, its shards, its forward's result and the
    /// gradient of its output; returns the gradients of its queries, keys and values,
    /// one block per chunk.
    ///
    /// # Shapes
    /// Blocks `[batch, heads, len, head_dim]`.
    fn ring_backward(
        &self,
        qkv: &[[Shard; 3]],
        running: Vec<Running>,
        grad_out: &[Shard],
        layout: Layout,
    ) -> Result<Vec<[Vec<Tensor>; 3]>>;

    /// Each rank here's rows of a tensor, gathered from every rank onto every rank:
    /// returns all ranks' rows, in rank order.
    ///
    /// # Shapes
    /// `rows`: `[batch, tokens / world, ..]` each, the same shape on every rank.
    fn all_gather(&self, rows: &[Tensor]) -> Result<Vec<Tensor>>;
}

/// Every rank in this one process, each step taken for every rank in turn: the ring is
/// chapter 24's simulation, a gather is a copy.
#[derive(Clone, Copy, Debug)]
pub struct OneProcess {
    /// Ranks in all.
    pub world: usize,
}

impl Messages for OneProcess {
    fn world(&self) -> usize {
        self.world
    }

    fn ranks_here(&self) -> Vec<usize> {
        (0..self.world).collect()
    }

    fn ring_attention(
        &self,
        qkv: &[[Shard; 3]],
        layout: Layout,
    ) -> Result<Vec<Running>> {
        let [q, k, v] = whole(qkv)?;
        let mut last = vec![Vec::new(); self.world];
        ring_attention_simulated(
            &q,
            &k,
            &v,
            self.world,
            layout,
            |rank, step, running| {
                if step + 1 == self.world {
                    last[rank] = running.clone();
                }
            },
        )?;
        Ok(last)
    }

    fn ring_backward(
        &self,
        qkv: &[[Shard; 3]],
        _running: Vec<Running>,
        grad_out: &[Shard],
        layout: Layout,
    ) -> Result<Vec<[Vec<Tensor>; 3]>> {
        // The simulation of the backward walks the forward's ring again for its results.
        let [q, k, v] = whole(qkv)?;
        let grad_out = in_sequence_order(
            grad_out
                .iter()
                .map(|s| (s.chunks.clone(), s.blocks.clone()))
                .collect(),
        )?;
        let grads =
            ring_backward_simulated([&q, &k, &v], &grad_out, self.world, layout)?;
        (0..self.world)
            .map(|rank| {
                let shard = |t: &Tensor| Shard::of_rank(t, layout, rank, self.world);
                Ok([
                    shard(&grads[0])?.blocks,
                    shard(&grads[1])?.blocks,
                    shard(&grads[2])?.blocks,
                ])
            })
            .collect()
    }

    fn all_gather(&self, rows: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(rows.to_vec())
    }
}

/// Every rank's shards of the queries, keys and values joined in sequence order.
///
/// # Shapes
/// Blocks `[batch, heads, len, d]`; returns three `[batch, heads, tokens, d]`.
fn whole(qkv: &[[Shard; 3]]) -> Result<[Tensor; 3]> {
    let joined = |i: usize| {
        in_sequence_order(
            qkv.iter()
                .map(|s| (s[i].chunks.clone(), s[i].blocks.clone()))
                .collect(),
        )
    };
    Ok([joined(0)?, joined(1)?, joined(2)?])
}

/// Every rank's rows of one tensor, on every rank, in sequence order.
///
/// # Shapes
/// `rows`: one `[batch, tokens / world, ..]` per rank here; returns `[batch, tokens,
/// ..]`.
fn gathered(
    messages: &impl Messages,
    rows: &[Tensor],
    layout: Layout,
) -> Result<Tensor> {
    Ok(in_token_order(&messages.all_gather(rows)?, layout))
}

/// What a rank holds of the batch: its positions, chunks and token ids.
struct RankBatch {
    rank: usize,
    positions: Vec<usize>,
    chunks: Vec<usize>,
    ids: Tensor<i64>,
}

/// What the forward leaves on the ranks here, one entry per rank.
struct Forward {
    /// The stream after the last layer.
    stream: Vec<Tensor>,
    /// Each layer's tapes, the first layer first.
    tapes: Vec<Vec<RankTape>>,
    /// The last norm's output.
    normed: Vec<Tensor>,
    /// The logits of the rank's tokens.
    logits: Vec<Tensor>,
}

/// The model's forward on the ranks here: token by token on each rank's rows, the
/// attention by the ring.
///
/// # Shapes
/// Each rank's ids `[batch, tokens / world]`; its logits `[batch, tokens / world,
/// vocab_size]`.
fn forward_on_ranks(
    model: &Llama,
    ranks: &[RankBatch],
    messages: &impl Messages,
    layout: Layout,
) -> Result<Forward> {
    let mut x: Vec<Tensor> =
        ranks.iter().map(|r| model.wte.forward(&r.ids)).collect();
    let mut tapes: Vec<Vec<RankTape>> = Vec::new();
    for layer in &model.layers {
        let (h, qkv): (Vec<Tensor>, Vec<[Shard; 3]>) = ranks
            .iter()
            .zip(&x)
            .map(|(r, x)| before_ring(layer, x, &r.positions, &r.chunks))
            .unzip();
        let running = messages.ring_attention(&qkv, layout)?;
        let mut layer_tapes = Vec::with_capacity(ranks.len());
        for (((x, h), qkv), running) in x.iter_mut().zip(h).zip(qkv).zip(running) {
            let (out, tape) = after_ring(layer, [x.clone(), h], qkv, running)?;
            *x = out;
            layer_tapes.push(tape);
        }
        tapes.push(layer_tapes);
    }
    let normed: Vec<Tensor> = x.iter().map(|s| model.norm.forward(s)).collect();
    let logits: Vec<Tensor> = normed
        .iter()
        .map(|n| tied_head(n, &model.wte.weight))
        .collect();

    Ok(Forward {
        stream: x,
        tapes,
        normed,
        logits,
    })
}

/// The loss of `batch` and every parameter's gradient, in `named_parameters()` order,
/// with the sequence cut across the ranks of `messages` by `layout`; the same on every
/// rank.
///
/// # Shapes
/// `batch`: `[batch, tokens]` inputs and targets, every rank the whole batch.
// ANCHOR: loss_and_gradients
pub fn loss_and_gradients_across_ranks(
    model: &Llama,
    batch: &Batch,
    messages: &impl Messages,
    layout: Layout,
) -> Result<(f32, Vec<Tensor>)> {
    let (world, tokens) = (messages.world(), batch.x.size(1));
    let ranks = messages
        .ranks_here()
        .into_iter()
        .map(|rank| {
            Ok(RankBatch {
                rank,
                positions: positions_of(tokens, rank, world, layout)?,
                chunks: layout.chunks_of(rank, world),
                ids: rows_of(&batch.x, rank, world, layout)?,
            })
        })
        .collect::<Result<Vec<RankBatch>>>()?;

    // Forward: token by token on each rank's rows, the attention by the ring.
    let Forward {
        stream: x,
        tapes,
        normed,
        logits,
    } = forward_on_ranks(model, &ranks, messages, layout)?;

    // The loss's mean, and its 1/tokens in every gradient, over every token's logits.
    let all_logits = gathered(messages, &logits, layout)?;
    let targets = batch.y.reshape(&[-1]);
    let ce = PytorchOrder::cross_entropy(&all_logits.flatten(0, 1), &targets);
    let grad_logits = PytorchOrder::cross_entropy_backward(&ce.log_probs, &targets)
        .view(all_logits.sizes());

    // Backward: token by token on each rank's rows, the attention by the ring.
    let head = Linear::from_parameters(model.wte.weight.clone(), None);
    let mut grad = Vec::with_capacity(ranks.len());
    let mut grad_normed = Vec::with_capacity(ranks.len());
    for ((r, stream), normed) in ranks.iter().zip(&x).zip(&normed) {
        let mine = rows_of(&grad_logits, r.rank, world, layout)?;
        let head = PytorchOrder::linear_backward(&head, normed, &mine);
        let norm =
            PytorchOrder::rms_norm_backward(&model.norm, stream, &head.input, None);
        grad_normed.push(head.input);
        grad.push(norm.input);
    }
    let mut layer_rows: Vec<Vec<LayerRows>> = Vec::new();
    for (layer, layer_tapes) in model.layers.iter().zip(tapes).rev() {
        let after: Vec<_> = layer_tapes
            .iter()
            .zip(grad)
            .map(|(tape, g)| backward_after_ring(layer, tape, g))
            .collect();
        let qkv: Vec<[Shard; 3]> =
            layer_tapes.iter().map(|t| t.qkv.clone()).collect();
        let running = layer_tapes.iter().map(|t| t.running.clone()).collect();
        let grad_heads: Vec<Shard> =
            after.iter().map(|a| a.grad_heads.clone()).collect();
        let grad_qkv = messages.ring_backward(&qkv, running, &grad_heads, layout)?;
        let mut rows = Vec::with_capacity(ranks.len());
        grad = Vec::with_capacity(ranks.len());
        for (((tape, after), grad_qkv), r) in
            layer_tapes.into_iter().zip(after).zip(grad_qkv).zip(&ranks)
        {
            let (g, row) =
                backward_before_ring(layer, tape, after, grad_qkv, &r.positions);
            grad.push(g);
            rows.push(row);
        }
        layer_rows.push(rows);
    }
    layer_rows.reverse();

    // The sums over the sequence, from every token's pieces in sequence order.
    let end: Vec<EndRows> = grad
        .into_iter()
        .zip(x)
        .zip(grad_normed)
        .zip(normed)
        .map(|(((grad_lookup, stream), grad_normed), normed)| EndRows {
            grad_lookup,
            stream,
            grad_normed,
            normed,
        })
        .collect();
    let gather = |rows: &[Tensor]| gathered(messages, rows, layout);
    let end = EndRows::combine(&end, gather)?;
    let layers = layer_rows
        .iter()
        .map(|rows| LayerRows::combine(rows, gather))
        .collect::<Result<Vec<LayerRows>>>()?;
    let grads = gradients_from_rows(model, &batch.x, &grad_logits, &end, &layers);
    Ok((ce.loss, grads))
}
// ANCHOR_END: loss_and_gradients

/// One training step across ranks at step `step`: the loss and gradients of
/// [`loss_and_gradients_across_ranks`], then chapter 22's clip and AdamW, the same on
/// every rank. Returns the loss.
///
/// # Shapes
/// `batch`: `[batch, tokens]` inputs and targets.
// ANCHOR: train_step
pub fn train_step_across_ranks(
    model: &mut Model,
    optimizer: &mut AdamW,
    settings: &Settings,
    batch: &Batch,
    messages: &impl Messages,
    layout: Layout,
) -> Result<f32> {
    let Model::Llama(llama) = &*model else {
        return Err(Error::InvalidArgument {
            op: "train_step_across_ranks",
            detail: "the step across ranks is written for the Llama model".into(),
        });
    };
    let (loss, grads) =
        loss_and_gradients_across_ranks(llama, batch, messages, layout)?;
    apply_gradients::<PytorchOrder>(model, optimizer, settings, 0, loss, grads)?;
    Ok(loss)
}
// ANCHOR_END: train_step
