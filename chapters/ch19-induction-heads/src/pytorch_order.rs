//! The training step in PyTorch's order of additions ([`PytorchOrder`]): chapters 10 and
//! 11's `pytorch_order` twins, and one product whose additions PyTorch orders differently
//! from a plain chain here: the weight gradient of a linear layer, `grad_yᵀ·x`, summed over
//! all 2048 token rows of a batch.
//!
//! The formula ([`ch10_backward::linear::linear_backward`]) adds the rows' contributions
//! one after another. PyTorch's CPU matrix product (MKL's `sgemm`) cuts a long sum into
//! blocks of rows: blocks of 384 while more than 768 rows are left, then the rest in two
//! halves (the larger first), or in one block if at most 384 are left. Each block is summed
//! on its own, from zero, and the block sums are added into the result in order. The sums
//! agree to a few units in the last place; the bits differ, and after hundreds of training
//! steps so would the printed digits (see the appendix on matching PyTorch).
//!
//! The attention core's backward is chapter 10's in PyTorch's order, its steps between
//! the two products taken in one pass ([`attention_backward_in_one_pass`]): the same
//! roundings in the same order, so the same bits (a test checks them against chapter 10's),
//! and the batch's sequences shared between the pool's threads
//! ([`attention_backward_by_sequences`]).

use ch10_backward::attention::{AttentionGrads, AttentionTape};
use ch10_backward::linear::LinearGrads;
use ch10_backward::matmul::matmul_backward;
use ch10_backward::pointwise::{
    dropout_backward, masked_fill_backward, scale_backward,
};
use ch10_backward::pytorch_order::softmax_backward_in_pytorch_order;
use ch11_training::adamw::StepConstants;
use ch11_training::cross_entropy::CrossEntropy;
use ch11_training::pytorch_order::{
    adamw_update_in_pytorch_order, cross_entropy_backward_in_pytorch_order,
    cross_entropy_in_pytorch_order,
};
use rayon::prelude::*;
use shared::exact::{Capability, ThreadSettings, capability};
use shared::nn::Linear;
use shared::{Tensor, cat};

use crate::arithmetic::Arithmetic;

/// The training step's arithmetic in PyTorch's order: the printed run's.
pub struct PytorchOrder;

impl Arithmetic for PytorchOrder {
    fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads {
        linear_backward_in_pytorch_order(layer, x, grad_y)
    }
    fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads {
        attention_backward_by_sequences(tape, grad_out)
    }
    fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy {
        cross_entropy_in_pytorch_order(logits, targets)
    }
    fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
        cross_entropy_backward_in_pytorch_order(log_probs, targets)
    }
    fn adamw_update(
        p: &mut f32,
        g: f32,
        m: &mut f32,
        v: &mut f32,
        k: &StepConstants,
    ) {
        adamw_update_in_pytorch_order(p, g, m, v, k)
    }
}

/// The most rows one block of MKL's `sgemm` sums.
pub const BLOCK_ROWS: usize = 384;

/// The row ranges `sgemm` sums one at a time, for a sum over `rows` rows.
///
/// # Shapes
/// Returns ranges that cover `0..rows` in order.
pub fn row_blocks(rows: usize) -> Vec<std::ops::Range<usize>> {
    let mut blocks = Vec::new();
    let mut start = 0;
    while rows - start > 2 * BLOCK_ROWS {
        blocks.push(start..start + BLOCK_ROWS);
        start += BLOCK_ROWS;
    }
    let left = rows - start;
    if left > BLOCK_ROWS {
        let first = left.div_ceil(2);
        blocks.push(start..start + first);
        blocks.push(start + first..rows);
    } else {
        blocks.push(start..rows);
    }
    blocks
}

/// `grad_yᵀ·x` over the rows of `x` and `grad_y` (leading dims flattened), in `sgemm`'s
/// blocks.
///
/// # Shapes
/// `x`: `[.., d_in]`, `grad_y`: `[.., d_out]` with the same leading dims. Returns
/// `[d_out, d_in]`.
pub fn weight_gradient_in_pytorch_order(x: &Tensor, grad_y: &Tensor) -> Tensor {
    let x2 = x.flatten(0, -2);
    let g2 = grad_y.flatten(0, -2);
    // The blocks' products are independent: they run on the pool's threads (computing as
    // this one), and their sums are added in order afterwards.
    let settings = ThreadSettings::current();
    let blocks: Vec<Tensor> = row_blocks(x2.size(0))
        .into_par_iter()
        .map(|rows| {
            settings.run(|| g2.slice(0, rows.clone()).t().matmul(&x2.slice(0, rows)))
        })
        .collect();
    let mut blocks = blocks.into_iter();
    let first = blocks.next().expect("at least one block");
    blocks.fold(first, |sum, block| &sum + &block)
}

/// [`linear_backward`](ch10_backward::linear::linear_backward) with the weight gradient of
/// [`weight_gradient_in_pytorch_order`].
///
/// # Shapes
/// As [`linear_backward`](ch10_backward::linear::linear_backward).
pub fn linear_backward_in_pytorch_order(
    layer: &Linear,
    x: &Tensor,
    grad_y: &Tensor,
) -> LinearGrads {
    // The input and bias gradients as `linear_backward` computes them; its weight
    // gradient is not computed, only this one. The three are independent: they run on
    // the pool's threads, computing as this one.
    let g2 = grad_y.flatten(0, -2);
    let settings = ThreadSettings::current();
    let (weight, (bias, input)) = rayon::join(
        || settings.run(|| weight_gradient_in_pytorch_order(x, grad_y)),
        || {
            rayon::join(
                || settings.run(|| layer.bias.as_ref().map(|_| g2.sum_dim(0, false))),
                || settings.run(|| g2.matmul(&layer.weight).reshape(x.sizes())),
            )
        },
    );
    LinearGrads {
        weight,
        bias,
        input,
    }
}

/// [`attention_backward_in_pytorch_order`](ch10_backward::pytorch_order::attention_backward_in_pytorch_order)
/// with the three steps between the two products, softmax's backward, the scale's and the
/// mask's, taken in one pass over the weights ([`softmax_scale_mask_backward`]), and the
/// keys' gradient computed in the keys' layout: the same bits, without two whole-tensor
/// copies in between and with rows, not columns, for the merge of the heads to read.
///
/// # Shapes
/// As `attention_backward_in_pytorch_order`.
pub fn attention_backward_in_one_pass(
    tape: &AttentionTape,
    grad_out: &Tensor,
) -> AttentionGrads {
    let (grad_dropped, grad_values) =
        matmul_backward(&tape.dropped, &tape.values, grad_out);
    let grad_weights = dropout_backward(&grad_dropped, tape.noise.as_ref());
    let grad_scores = softmax_scale_mask_backward(
        &tape.weights,
        &grad_weights,
        tape.scale,
        &tape.hidden,
    );
    // `scores = queries·keysᵀ`. Chapter 10 takes the gradient of `keysᵀ`, `queriesᵀ·grad`,
    // and transposes it; `gradᵀ·queries` adds the same products in the same order (one
    // fused chain over the tokens per element), laid out as the keys are.
    let grad_queries = grad_scores.matmul(&tape.keys);
    let grad_keys = grad_scores.transpose(-2, -1).matmul(&tape.queries);
    AttentionGrads {
        queries: grad_queries,
        keys: grad_keys,
        values: grad_values,
    }
}

/// [`attention_backward_in_one_pass`] with the batch cut into as many parts as the pool has
/// threads, each part's backward on a thread of its own: one hand-over per call instead of
/// one per step inside. Every sequence's gradients are computed as the whole batch's would
/// be (nothing in the attention core's backward adds across sequences, and each thread
/// computes as the calling one), so the bits are the same on any number of threads.
///
/// # Shapes
/// As `attention_backward_in_pytorch_order`, with the batch as the first dim.
pub fn attention_backward_by_sequences(
    tape: &AttentionTape,
    grad_out: &Tensor,
) -> AttentionGrads {
    let batch = if grad_out.dim() >= 3 {
        grad_out.size(0)
    } else {
        1
    };
    let parts = rayon::current_num_threads().min(batch);
    if parts < 2 {
        return attention_backward_in_one_pass(tape, grad_out);
    }
    let sequences = |part: usize| part * batch / parts..(part + 1) * batch / parts;
    let settings = ThreadSettings::current();
    let grads: Vec<AttentionGrads> = (0..parts)
        .into_par_iter()
        .map(|part| {
            let rows = sequences(part);
            let of = |t: &Tensor| t.slice(0, rows.clone());
            let part_tape = AttentionTape {
                queries: of(&tape.queries),
                keys: of(&tape.keys),
                values: of(&tape.values),
                hidden: tape.hidden.clone(),
                scale: tape.scale,
                weights: of(&tape.weights),
                noise: tape.noise.as_ref().map(of),
                dropped: of(&tape.dropped),
            };
            settings.run(|| attention_backward_in_one_pass(&part_tape, &of(grad_out)))
        })
        .collect();
    let joined = |field: fn(&AttentionGrads) -> &Tensor| {
        cat(&grads.iter().map(field).collect::<Vec<_>>(), 0)
    };
    AttentionGrads {
        queries: joined(|g| &g.queries),
        keys: joined(|g| &g.keys),
        values: joined(|g| &g.values),
    }
}

/// The fewest elements a thread is given by [`softmax_scale_mask_backward`] (ATen's grain).
const ROWS_GRAIN: usize = 32768;

/// `masked_fill_backward(scale_backward(softmax_backward(y, grad_y), scale), hidden)` in
/// PyTorch's order, a row at a time: each row's dot product `Σ grad_y·y` in the lanes of
/// PyTorch's softmax backward ([`row_dot`](ch10_backward::pytorch_order::row_dot)), then for
/// each element `(grad_y − dot)·y`, divided by `scale`, 0 where `hidden`. Every element
/// goes through the roundings of the three steps in their order, so the bits are theirs.
/// Weights that are not one row-major block, or a mask that is not one `[tokens, keys]`
/// matrix, take the three steps one after the other.
///
/// # Shapes
/// `y`, `grad_y`: `[.., tokens, keys]`; `hidden`: `[tokens, keys]`. Returns `[.., tokens,
/// keys]`.
pub fn softmax_scale_mask_backward(
    y: &Tensor,
    grad_y: &Tensor,
    scale: f32,
    hidden: &Tensor<bool>,
) -> Tensor {
    let one_block = y.dim() >= 2
        && y.sizes() == grad_y.sizes()
        && hidden.sizes() == &y.sizes()[y.dim() - 2..];
    let values = (y.as_slice(), grad_y.as_slice(), hidden.as_slice());
    let (true, (Some(y_values), Some(g_values), Some(hidden_values))) =
        (one_block, values)
    else {
        let grad_scaled = softmax_backward_in_pytorch_order(y, grad_y);
        return masked_fill_backward(&scale_backward(&grad_scaled, scale), hidden);
    };
    let keys = y.size(-1).max(1);
    // The capability is this thread's: read here, not on the threads the rows go to.
    let (lanes, halving) = (
        capability().softmax_lanes(),
        capability() != Capability::Default,
    );
    let hidden_rows: Vec<&[bool]> = hidden_values.chunks(keys).collect();
    let mut grad_x = vec![0.0f32; y_values.len()];
    // The rows are independent: blocks of them go to the pool's threads (at least
    // `ROWS_GRAIN` elements each, as ATen's grain), each row computed as on one thread.
    let rows = grad_x.par_chunks_mut(keys).zip(y_values.par_chunks(keys));
    let rows = rows.zip(g_values.par_chunks(keys)).enumerate();
    rows.with_min_len(ROWS_GRAIN.div_ceil(keys)).for_each(
        |(row, ((out, y_row), g_row))| {
            let hidden_row = hidden_rows[row % hidden_rows.len()];
            let dot = lane_dot(g_row, y_row, lanes, halving);
            let values = g_row.iter().zip(y_row).zip(hidden_row);
            for (o, ((&g, &y), &h)) in out.iter_mut().zip(values) {
                *o = if h { 0.0 } else { (g - dot) * y / scale };
            }
        },
    );
    Tensor::from_vec(grad_x, y.sizes())
}

/// `Σ a[i]·b[i]` as [`row_dot`](ch10_backward::pytorch_order::row_dot) adds it in `lanes`
/// lanes: a row shorter than the lanes left to right; else lane `l` takes the products
/// `l, l + lanes, ...`, and the lanes are added in pairs, `halving` (in order on the
/// portable build, `halving` false). The lanes live on the stack: no allocation per row.
///
/// # Shapes
/// `a`, `b`: the same length.
fn lane_dot(a: &[f32], b: &[f32], lanes: usize, halving: bool) -> f32 {
    let mut products = a.iter().zip(b).map(|(x, y)| x * y);
    if a.len() < lanes {
        let first = products.next().unwrap_or(0.0);
        return products.fold(first, |acc, p| acc + p);
    }
    let mut sums = [0.0f32; 16];
    let sums = &mut sums[..lanes];
    for (sum, p) in sums.iter_mut().zip(products.by_ref()) {
        *sum = p;
    }
    for (t, p) in products.enumerate() {
        sums[t % lanes] += p;
    }
    if !halving {
        return sums[1..].iter().fold(sums[0], |acc, &x| acc + x);
    }
    // Lane `l < half` takes lane `l + half` (`l xor half`): lane 0 ends with the total.
    let mut half = lanes / 2;
    while half > 0 {
        for l in 0..half {
            sums[l] += sums[l + half];
        }
        half /= 2;
    }
    sums[0]
}
