//! The batch-invariant twins of the forward passes: every product one query row at a time.
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
//! batch, and cached and recomputed logits agree bit for bit. The formulas,
//! [`GroupedQueryAttention::forward`] and [`TinyDecoder::forward`], take their products all
//! at once; the twins here agree with them to within rounding (the chapter's tests compare
//! them).

use ch07_multihead_split::heads::{merge_heads, split_heads};
use shared::nn::Linear;
use shared::{Tensor, cat};

use crate::attention::GroupedQueryAttention;
use crate::gqa::repeat_kv;
use crate::kv_cache::KvCache;
use crate::model::TinyDecoder;

/// `layer(x)` one row at a time.
///
/// # Shapes
/// `x`: `[batch, tokens, in_features]`. Returns `[batch, tokens, out_features]`.
// ANCHOR: linear
pub fn linear_row_by_row(layer: &Linear, x: &Tensor) -> Tensor {
    let rows: Vec<Tensor> = (0..x.size(1))
        .map(|i| layer.forward(&x.narrow(1, i, 1)))
        .collect();
    cat(&rows, 1)
}
// ANCHOR_END: linear

/// The first key query `i` sees: `0`, or `i - w + 1` once a window of `w` is full.
fn first_visible(i: usize, window: Option<usize>) -> usize {
    match window {
        None => 0,
        Some(w) => (i + 1).saturating_sub(w),
    }
}

impl GroupedQueryAttention {
    /// [`GroupedQueryAttention::forward`] with batch-invariant products: every projection
    /// one row at a time, every query against the slice of keys it sees.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]` and a cache of
    /// `[batch, n_kv_heads, min(tokens, window), head_dim]` keys and values.
    // ANCHOR: forward
    pub fn forward_row_by_row(&self, x: &Tensor) -> (Tensor, KvCache) {
        let q = split_heads(&linear_row_by_row(&self.w_query, x), self.n_heads);
        let k = split_heads(&linear_row_by_row(&self.w_key, x), self.n_kv_heads);
        let v = split_heads(&linear_row_by_row(&self.w_value, x), self.n_kv_heads);
        let v_rep = repeat_kv(&v, self.n_rep());
        let rows: Vec<Tensor> = (0..x.size(1))
            .map(|i| {
                let seen = first_visible(i, self.window)..i + 1;
                let k_seen = k.slice(2, seen.clone());
                let weights = self.weights(&q.narrow(2, i, 1), &k_seen, None);
                weights.matmul(&v_rep.slice(2, seen))
            })
            .collect();
        let context = cat(&rows, 2);
        let out = linear_row_by_row(&self.out_proj, &merge_heads(&context));
        (out, KvCache::new(k, v, self.window))
    }
    // ANCHOR_END: forward
}

impl TinyDecoder {
    /// [`TinyDecoder::forward`] with batch-invariant products.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    pub fn forward_row_by_row(&self, ids: &Tensor<i64>) -> (Tensor, KvCache) {
        let x = self.embed(ids, 0);
        let (out, cache) = self.attn.forward_row_by_row(&x);
        (linear_row_by_row(&self.lm_head, &(x + out)), cache)
    }
}
