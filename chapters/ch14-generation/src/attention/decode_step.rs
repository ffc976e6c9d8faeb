//! One decoding step with the cache, kept in its own file because it is an exercise.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use shared::Tensor;

use crate::attention::GroupedQueryAttention;
use crate::gqa::repeat_kv;
use crate::kv_cache::KvCache;

impl GroupedQueryAttention {
    /// Attention for one new token: its query, key and value only, the key and value
    /// appended to `cache`, the query against every cached key. No mask is needed: the
    /// cache holds exactly the keys the new token may see (the past, within the window).
    /// Returns the token's output and its attention weights.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`; `cache`: `[batch, n_kv_heads, cached, head_dim]`,
    /// one token longer afterwards (up to the window). Returns `[batch, 1, d_model]` and
    /// weights `[batch, n_heads, 1, cached]`.
    // ANCHOR: step
    pub fn step(&self, x_new: &Tensor, cache: &mut KvCache) -> (Tensor, Tensor) {
        let q = split_heads(&self.w_query.forward(x_new), self.n_heads);
        let k = split_heads(&self.w_key.forward(x_new), self.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x_new), self.n_kv_heads);
        cache.append(&k, &v);
        let weights = self.weights(&q, &cache.keys, None); // [b, n_heads, 1, cached]
        let context = weights.matmul(&repeat_kv(&cache.values, self.n_rep()));
        (self.out_proj.forward(&merge_heads(&context)), weights)
    }
    // ANCHOR_END: step
}
