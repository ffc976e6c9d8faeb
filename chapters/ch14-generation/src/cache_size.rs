//! How big the KV cache grows: two tensors (keys and values) per layer, each with one
//! `head_dim` vector per key/value head and per cached token.

/// The bytes of a KV cache: `2 · layers · kv_heads · head_dim · tokens · bytes_per_value`.
/// Only key/value heads count, so grouped-query attention with `n_heads / kv_heads` query
/// heads per group divides the cache by that factor; a sliding window caps `tokens`.
/// The count is a `u64`: a big model's cache passes 4 GiB, more than a 32-bit `usize`
/// holds (the book's WebAssembly build is 32-bit).
///
/// # Shapes
/// Scalars: counts, and 4 (float32) or 2 (float16, bfloat16) bytes per value.
// ANCHOR: cache_bytes
pub fn cache_bytes(
    layers: usize,
    kv_heads: usize,
    head_dim: usize,
    tokens: usize,
    bytes_per_value: usize,
) -> u64 {
    let [layers, kv_heads, head_dim, tokens, bytes_per_value] =
        [layers, kv_heads, head_dim, tokens, bytes_per_value].map(|n| n as u64);
    2 * layers * kv_heads * head_dim * tokens * bytes_per_value
}
// ANCHOR_END: cache_bytes
