//! The batch-invariant twins of the layer's forward passes: every product one token row at
//! a time, every query against exactly the keys it may see (chapter 14's batch-invariant
//! products).
//!
//! The formulas ([`Attention::forward`], [`SwiGLU::forward`], [`Layer::forward`],
//! [`TinyModel::forward`]) take a sequence's products all at once, as PyTorch does. A
//! product's order of additions can depend on how many rows it multiplies, so a cached
//! step (one row) and a recomputed sequence (all rows) can differ in the last bits. The
//! twins here give every row the additions of a one-row product: their logits are the
//! cached steps' bit for bit, and they agree with the formulas to within rounding (the
//! chapter's tests compare them).
//!
//! Where a product's weight is large, the tensor crate's `Linear::forward_row_by_row` takes
//! all the rows at once: each row's outputs are still added in the one-row order, but the
//! weight is read from memory once for all the rows rather than once per row.

use ch07_multihead_split::heads::merge_heads;
use ch14_generation::KvCache;
use ch14_generation::gqa::repeat_kv;
use shared::{Tensor, cat};

use crate::attention::{Attention, kept, visible};
use crate::layer::Layer;
use crate::model::{Forward, TinyModel};
use crate::recipe::Recipe;
use crate::swiglu::SwiGLU;

/// `row(i)` for every token `i` in `0..tokens`, concatenated along the tokens.
///
/// # Shapes
/// Each `row(i)`: `[batch, 1, features]`. Returns `[batch, tokens, features]`.
pub fn row_by_row(tokens: usize, row: impl Fn(usize) -> Tensor) -> Tensor {
    let rows: Vec<Tensor> = (0..tokens).map(row).collect();
    cat(&rows, 1)
}

impl Attention {
    /// [`Attention::qkv`] of each token alone, concatenated.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`, `positions`: `tokens` of them. Returns q
    /// `[batch, n_heads, tokens, head_dim]`, k and v `[batch, n_kv_heads, tokens, head_dim]`.
    pub fn qkv_row_by_row(
        &self,
        x: &Tensor,
        positions: &[usize],
        recipe: &Recipe,
    ) -> (Tensor, Tensor, Tensor) {
        let (mut qs, mut ks, mut vs) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &position) in positions.iter().enumerate() {
            let (q, k, v) = self.qkv(&x.narrow(1, i, 1), &[position], recipe);
            qs.push(q);
            ks.push(k);
            vs.push(v);
        }
        (cat(&qs, 2), cat(&ks, 2), cat(&vs, 2))
    }

    /// The gated heads projected back ([`Attention::gated`], then `out_proj`), one token
    /// at a time.
    ///
    /// # Shapes
    /// `merged_heads`: `[batch, tokens, n_heads · head_dim]`, `x`: `[batch, tokens,
    /// d_model]`. Returns `[batch, tokens, d_model]`.
    pub fn output_row_by_row(
        &self,
        merged_heads: &Tensor,
        x: &Tensor,
        recipe: &Recipe,
    ) -> Tensor {
        let heads = row_by_row(x.size(1), |i| {
            self.gated(&merged_heads.narrow(1, i, 1), &x.narrow(1, i, 1), recipe)
        });
        self.out_proj.forward_row_by_row(&heads)
    }

    /// [`Attention::forward`] with batch-invariant products: each query against the slice
    /// of keys it sees, rather than all keys with the others masked.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]` and a cache of
    /// `[batch, n_kv_heads, min(tokens, window), head_dim]` keys and values.
    pub fn forward_row_by_row(
        &self,
        x: &Tensor,
        recipe: &Recipe,
        window: Option<usize>,
    ) -> (Tensor, KvCache) {
        let t = x.size(1);
        let positions: Vec<usize> = (0..t).collect();
        let (q, k, v) = self.qkv_row_by_row(x, &positions, recipe);
        let v_rep = repeat_kv(&v, self.n_rep());
        let context: Vec<Tensor> = (0..t)
            .map(|i| {
                let seen = visible(i, window, recipe.sink_tokens);
                let keys = k.index_select(2, &seen);
                let weights = self.weights(&q.narrow(2, i, 1), &keys, recipe, None);
                weights.matmul(&v_rep.index_select(2, &seen))
            })
            .collect();
        let out = self.output_row_by_row(&merge_heads(&cat(&context, 2)), x, recipe);
        (out, kept(&k, &v, window, recipe.sink_tokens))
    }
}

impl SwiGLU {
    /// [`SwiGLU::forward`] of each token alone.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    pub fn forward_row_by_row(&self, x: &Tensor) -> Tensor {
        // The SiLU and the product act on each number alone: only the three matrix
        // products need the one-row order.
        let gate = self.w_gate.forward_row_by_row(x).silu();
        self.w_down
            .forward_row_by_row(&(gate * self.w_up.forward_row_by_row(x)))
    }
}

impl Layer {
    /// [`Layer::forward`] with the batch-invariant attention and network.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    pub fn forward_row_by_row(
        &self,
        x: &Tensor,
        recipe: &Recipe,
        window: Option<usize>,
    ) -> (Tensor, KvCache) {
        let x_norm = self.attn_norm.forward(x);
        let (out, cache) = self.attn.forward_row_by_row(&x_norm, recipe, window);
        let h = x + out;
        let y = &h + self.ffn.forward_row_by_row(&self.ffn_norm.forward(&h));
        (y, cache)
    }
}

impl TinyModel {
    /// [`TinyModel::forward`] with batch-invariant layers and head.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    pub fn forward_row_by_row(&self, ids: &Tensor<i64>, recipe: &Recipe) -> Forward {
        let (x, caches) = self.through_layers(ids, recipe, Layer::forward_row_by_row);
        let logits = self.head_row_by_row(&x);
        (logits, caches)
    }

    /// The vocabulary head of each token alone.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]` (after the final norm). Returns
    /// `[batch, tokens, vocab_size]`.
    pub fn head_row_by_row(&self, x: &Tensor) -> Tensor {
        self.lm_head.forward_row_by_row(x)
    }
}
