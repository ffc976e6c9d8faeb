//! Grouped-query attention: fewer key/value heads than query heads.
//!
//! With `n_heads` query heads and `n_kv_heads` key/value heads (`n_heads` a multiple of
//! it), query heads `g·n_rep .. (g+1)·n_rep` all read key/value head `g`, where
//! `n_rep = n_heads / n_kv_heads`. `n_kv_heads = n_heads` is ordinary multi-head attention,
//! `n_kv_heads = 1` multi-query attention. The cache stores only the `n_kv_heads` heads;
//! chapter 7's `repeat_kv` copies them out to one per query head just before the products.

pub use ch07_multihead_split::grouped::repeat_kv;
