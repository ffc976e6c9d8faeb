//! The bytes one rank sends in a ring pass.

/// Bytes rank sends over a whole ring pass of `world` ranks: its keys and values move on
/// `world - 1` times, each time a block of `tokens / world` tokens with `kv_heads` heads
/// of `head_dim` float32 numbers for the keys and as many for the values. Query heads
/// that share a key/value head (grouped-query attention) add nothing.
///
/// # Shapes
/// Counts only; `world` divides `tokens`.
pub fn ring_bytes(
    tokens: usize,
    kv_heads: usize,
    head_dim: usize,
    world: usize,
) -> u64 {
    // TODO: how many times does a rank send, and how many bytes is one block of keys and
    // values?
    let _ = (tokens, kv_heads, head_dim, world);
    todo!("ring_bytes: sends times the bytes of one block of keys and values")
}
