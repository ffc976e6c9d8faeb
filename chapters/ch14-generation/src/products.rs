//! Two ways to compute the same forward pass, which differ only in the order of additions.
//!
//! PyTorch multiplies a whole sequence at once: a projection of `t` tokens is one
//! `[t, d_in]·[d_in, d_out]` product. A matrix-product kernel orders the additions of each
//! output by the shape of the product, so the same row can come out a few float32 steps
//! apart depending on how many rows were multiplied with it (the orders are in the book's
//! appendix "How we match PyTorch exactly"). A KV cache multiplies one row per step,
//! recomputing multiplies them all: their logits differ in the last bits.
//!
//! *Batch-invariant* products remove that: every product is computed one query row at a
//! time, and each query attends to a slice of exactly the keys it may see (rather than to
//! all keys with the others masked). Then no addition depends on how many rows were in the
//! batch, and cached and recomputed logits agree bit for bit.

use shared::nn::Linear;
use shared::{Tensor, cat};

/// How a forward pass computes its products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Products {
    /// PyTorch's own way: a projection of a sequence is one product over all its rows,
    /// attention one product per head over all queries, with a mask.
    Batched,
    /// Batch-invariant: every product one query row at a time, each query against the
    /// keys it may see.
    RowByRow,
}

impl Products {
    /// `layer(x)`, all rows at once or one row at a time.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, in_features]`. Returns `[batch, tokens, out_features]`.
    // ANCHOR: linear
    pub fn linear(self, layer: &Linear, x: &Tensor) -> Tensor {
        match self {
            Products::Batched => layer.forward(x),
            Products::RowByRow => {
                let rows: Vec<Tensor> = (0..x.size(1))
                    .map(|i| layer.forward(&x.narrow(1, i, 1)))
                    .collect();
                cat(&rows, 1)
            }
        }
    }
    // ANCHOR_END: linear
}
