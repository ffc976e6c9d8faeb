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

use ch10_backward::attention::{AttentionGrads, AttentionTape};
use ch10_backward::linear::LinearGrads;
use ch10_backward::pytorch_order::attention_backward_in_pytorch_order;
use ch11_training::adamw::StepConstants;
use ch11_training::cross_entropy::CrossEntropy;
use ch11_training::pytorch_order::{
    adamw_update_in_pytorch_order, cross_entropy_backward_in_pytorch_order,
    cross_entropy_in_pytorch_order,
};
use shared::Tensor;
use shared::nn::Linear;

use crate::arithmetic::Arithmetic;

/// The training step's arithmetic in PyTorch's order: the printed run's.
pub struct PytorchOrder;

impl Arithmetic for PytorchOrder {
    fn linear_backward(layer: &Linear, x: &Tensor, grad_y: &Tensor) -> LinearGrads {
        linear_backward_in_pytorch_order(layer, x, grad_y)
    }
    fn attention_backward(tape: &AttentionTape, grad_out: &Tensor) -> AttentionGrads {
        attention_backward_in_pytorch_order(tape, grad_out)
    }
    fn cross_entropy(logits: &Tensor, targets: &Tensor<i64>) -> CrossEntropy {
        cross_entropy_in_pytorch_order(logits, targets)
    }
    fn cross_entropy_backward(log_probs: &Tensor, targets: &Tensor<i64>) -> Tensor {
        cross_entropy_backward_in_pytorch_order(log_probs, targets)
    }
    fn adamw_update(p: &mut f32, g: f32, m: &mut f32, v: &mut f32, k: &StepConstants) {
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
    let mut blocks = row_blocks(x2.size(0))
        .into_iter()
        .map(|rows| g2.slice(0, rows.clone()).t().matmul(&x2.slice(0, rows)));
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
    // gradient is not computed, only this one.
    let g2 = grad_y.flatten(0, -2);
    LinearGrads {
        weight: weight_gradient_in_pytorch_order(x, grad_y),
        bias: layer.bias.as_ref().map(|_| g2.sum_dim(0, false)),
        input: g2.matmul(&layer.weight).reshape(x.sizes()),
    }
}
