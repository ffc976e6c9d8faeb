//! The bytes one rank sends in a ring pass.

/// Bytes rank sends over a whole ring pass of `world` ranks: its keys and values move on
/// `world - 1` times, each time a block of `tokens / world` tokens with `kv_heads` heads
/// of `head_dim` float32 numbers for the keys and as many for the values. Query heads
/// that share a key/value head (grouped-query attention) add nothing.
///
/// # Shapes
/// Counts only; `world` divides `tokens`.
// ANCHOR: ring_bytes
pub fn ring_bytes(
    tokens: usize,
    kv_heads: usize,
    head_dim: usize,
    world: usize,
) -> u64 {
    let block = (tokens / world * kv_heads * head_dim * 4) as u64;
    (world as u64 - 1) * 2 * block
}
// ANCHOR_END: ring_bytes
