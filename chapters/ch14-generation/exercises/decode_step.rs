//! Exercise: one decoding step with the KV cache. Replace the `todo!()`; test with
//! `cargo test -p ch14-generation --features exercise decode_step`.

use shared::Tensor;

use crate::attention::GroupedQueryAttention;
use crate::kv_cache::KvCache;

impl GroupedQueryAttention {
    /// Attention for one new token: its query, key and value only, the key and value
    /// appended to `cache`, the query against every cached key (no mask needed). Returns
    /// the token's output and its attention weights.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`; `cache`: `[batch, n_kv_heads, cached, head_dim]`,
    /// one token longer afterwards (up to the window). Returns `[batch, 1, d_model]` and
    /// weights `[batch, n_heads, 1, cached]`.
    pub fn step(&self, x_new: &Tensor, cache: &mut KvCache) -> (Tensor, Tensor) {
        // TODO: project x_new with w_query, w_key, w_value and split each into heads
        // (n_heads for the query, n_kv_heads for key and value); append key and value to
        // the cache; weights = self.weights(query, all cached keys, no mask); multiply by
        // the cached values repeated for the query heads; merge the heads; out_proj.
        let _ = (x_new, cache);
        todo!("decode_step")
    }
}
