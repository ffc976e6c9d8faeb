//! One Llama layer on one rank's tokens, chapter 22's `layer_forward` and
//! `llama_backward` cut at the attention core: every part before and after it works
//! token by token on the rank's own rows (RoPE turns each query and key by its true
//! position in the sequence), and the core between is the ring's, across ranks.
//!
//! A part that works token by token gives each token the same bits whatever other rows
//! share the tensor: a product adds over its inner dim in the same order for every row,
//! and a norm or an activation looks at one row at a time. So a rank's rows are the rows
//! one process computes for the whole sequence (a test checks the products).

use ch07_multihead_split::heads::merge_heads;
use ch10_backward::heads::merge_heads_backward;
use ch15_modern_layer::layer::Layer;
use ch15_modern_layer::rope::rope_tables;
use ch19_induction_heads::arithmetic::Arithmetic as _;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::arithmetic::Arithmetic;
use ch22_pretraining::backward::rope::rope_backward;
use ch22_pretraining::backward::swiglu::swiglu_backward;
use ch22_pretraining::model::llama::{THETA, recipe};
use shared::{Result, Tensor, cat};

use crate::rank_tokens::shard_of_heads;
use crate::ring::{Running, Shard, finished};
use crate::sequence_sums::LayerRows;

/// What one layer's forward leaves on a rank for its backward, for the rank's tokens.
#[derive(Clone, Debug)]
pub struct RankTape {
    /// The layer's input: `[batch, tokens here, d_model]`.
    pub x: Tensor,
    /// `attn_norm(x)`.
    pub h: Tensor,
    /// The rank's queries, keys and values (turned by RoPE), as the ring's shards.
    pub qkv: [Shard; 3],
    /// The ring's result for the rank's queries: outputs and log-sum-exps.
    pub running: Running,
    /// The attention's heads merged, `out_proj`'s input.
    pub context: Tensor,
    /// The stream after attention.
    pub x1: Tensor,
    /// `ffn_norm(x1)`.
    pub h2: Tensor,
    /// `w_gate`'s output, `w_up`'s, and `silu(gate) ⊙ up`: `[batch, tokens here, d_ff]`.
    pub gate_up_gated: [Tensor; 3],
}

/// The layer up to the attention core on a rank's tokens at `positions`: the norm, the
/// projections, RoPE. Returns `attn_norm(x)` and the queries, keys and values as the
/// ring's shards of `chunks`.
///
/// # Shapes
/// `x`: `[batch, tokens here, d_model]`; shards' blocks `[batch, heads, len, head_dim]`.
// ANCHOR: before_ring
pub fn before_ring(
    layer: &Layer,
    x: &Tensor,
    positions: &[usize],
    chunks: &[usize],
) -> (Tensor, [Shard; 3]) {
    let h = layer.attn_norm.forward(x);
    let (q, k, v) = layer.attn.qkv(&h, positions, &recipe());
    let qkv = [q, k, v].map(|t| shard_of_heads(&t, chunks));
    (h, qkv)
}
// ANCHOR_END: before_ring

/// The rest of the layer on a rank's tokens, from the ring's result: the heads merged,
/// `out_proj`, the residual, the norm, SwiGLU, the residual. Returns the layer's output
/// and the tape.
///
/// # Shapes
/// `x`, `h`: `[batch, tokens here, d_model]`. Returns `[batch, tokens here, d_model]`.
// ANCHOR: after_ring
pub fn after_ring(
    layer: &Layer,
    [x, h]: [Tensor; 2],
    qkv: [Shard; 3],
    running: Running,
) -> Result<(Tensor, RankTape)> {
    let heads = cat(&finished(running.clone())?, 2);
    let context = merge_heads(&heads);
    let x1 = &x + &layer.attn.out_proj.forward(&context);
    let h2 = layer.ffn_norm.forward(&x1);
    let gate = layer.ffn.w_gate.forward(&h2);
    let up = layer.ffn.w_up.forward(&h2);
    let gated = gate.silu() * &up;
    let out = &x1 + &layer.ffn.w_down.forward(&gated);
    let tape = RankTape {
        x,
        h,
        qkv,
        running,
        context,
        x1,
        h2,
        gate_up_gated: [gate, up, gated],
    };
    Ok((out, tape))
}
// ANCHOR_END: after_ring

/// The pieces of the backward after the attention core (taken first): what the
/// core's backward needs, and what the rows of [`LayerRows`] need later.
#[derive(Clone, Debug)]
pub struct AfterRingGrads {
    /// The gradient of the attention's heads, as the ring's shards.
    pub grad_heads: Shard,
    /// The gradient of the stream after attention.
    pub grad_x1: Tensor,
    /// The gradient of `ffn_norm`'s output.
    pub grad_h2: Tensor,
    /// The gradients of `w_gate`'s and `w_up`'s outputs.
    pub grad_gate_up: [Tensor; 2],
    /// The gradient of the layer's output.
    pub grad_out: Tensor,
}

/// The backward of the layer's second half on a rank's tokens, from the gradient of its
/// output: SwiGLU, `ffn_norm`, `out_proj`, down to the attention's heads.
///
/// The weights' gradients these calls return are sums over this rank's tokens only
/// (what a real system would all-reduce); the step sums every token's rows instead.
///
/// # Shapes
/// `grad_out`: `[batch, tokens here, d_model]`.
// ANCHOR: backward_after_ring
pub fn backward_after_ring(
    layer: &Layer,
    tape: &RankTape,
    grad_out: Tensor,
) -> AfterRingGrads {
    let [gate, up, gated] = &tape.gate_up_gated;
    let ffn = swiglu_backward::<PytorchOrder>(
        &layer.ffn,
        &tape.h2,
        (gate, up, gated),
        &grad_out,
    );
    let ffn_norm = PytorchOrder::rms_norm_backward(
        &layer.ffn_norm,
        &tape.x1,
        &ffn.input,
        Some(&grad_out),
    );
    let grad_x1 = ffn_norm.input;
    let out_proj =
        PytorchOrder::linear_backward(&layer.attn.out_proj, &tape.context, &grad_x1);
    let grad_heads = merge_heads_backward(&out_proj.input, layer.attn.n_heads);
    AfterRingGrads {
        grad_heads: shard_of_heads(&grad_heads, &tape.qkv[0].chunks),
        grad_x1,
        grad_h2: ffn.input,
        grad_gate_up: [ffn.grad_gate, ffn.grad_up],
        grad_out,
    }
}
// ANCHOR_END: backward_after_ring

/// The backward of the layer's first half on a rank's tokens, from the ring's gradients
/// of its queries, keys and values: RoPE turned back at the rank's positions, the three
/// projections, `attn_norm`. Returns the gradient of the layer's input and the layer's
/// rows for the sums over the sequence.
///
/// # Shapes
/// `grad_qkv`: one block per chunk each, `[batch, heads, len, head_dim]`.
// ANCHOR: backward_before_ring
pub fn backward_before_ring(
    layer: &Layer,
    tape: RankTape,
    after: AfterRingGrads,
    grad_qkv: [Vec<Tensor>; 3],
    positions: &[usize],
) -> (Tensor, LayerRows) {
    let attn = &layer.attn;
    let [dq, dk, dv] = grad_qkv.map(|blocks| cat(&blocks, 2));
    let (cos, sin) = rope_tables(positions, attn.head_dim, THETA, false);
    let grad_q = merge_heads(&rope_backward(&dq, &cos, &sin));
    let grad_k = merge_heads(&rope_backward(&dk, &cos, &sin));
    let grad_v = merge_heads(&dv);
    let w_query = PytorchOrder::linear_backward(&attn.w_query, &tape.h, &grad_q);
    let w_key = PytorchOrder::linear_backward(&attn.w_key, &tape.h, &grad_k);
    let w_value = PytorchOrder::linear_backward(&attn.w_value, &tape.h, &grad_v);
    // The queries were made first, the values last: autograd adds them latest first.
    let grad_h = &(&w_value.input + &w_key.input) + &w_query.input;
    let attn_norm = PytorchOrder::rms_norm_backward(
        &layer.attn_norm,
        &tape.x,
        &grad_h,
        Some(&after.grad_x1),
    );
    let [.., gated] = tape.gate_up_gated;
    let rows = LayerRows {
        x: tape.x,
        grad_h,
        h: tape.h,
        grad_qkv: [grad_q, grad_k, grad_v],
        context: tape.context,
        grad_x1: after.grad_x1,
        x1: tape.x1,
        grad_h2: after.grad_h2,
        h2: tape.h2,
        grad_gate_up: after.grad_gate_up,
        gated,
        grad_out: after.grad_out,
    };
    (attn_norm.input, rows)
}
// ANCHOR_END: backward_before_ring
