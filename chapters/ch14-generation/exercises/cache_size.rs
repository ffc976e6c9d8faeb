//! Exercise: predict the size of a KV cache. Replace the `todo!()`; test with
//! `cargo test -p ch14-generation --features exercise cache_bytes`.

/// The bytes of a KV cache of `tokens` tokens, `bytes_per_value` bytes per number, as a
/// `u64` (a big model's cache passes 4 GiB, more than a 32-bit `usize` holds).
///
/// # Shapes
/// Scalars: counts, and 4 (float32) or 2 (float16, bfloat16) bytes per value.
pub fn cache_bytes(
    layers: usize,
    kv_heads: usize,
    head_dim: usize,
    tokens: usize,
    bytes_per_value: usize,
) -> u64 {
    // TODO: what does one layer store per cached token? Which heads count: the query
    // heads or the key/value heads? Two tensors are cached, not one.
    let _ = (layers, kv_heads, head_dim, tokens, bytes_per_value);
    todo!("cache_bytes")
}
