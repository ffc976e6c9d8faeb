//! Exercise: how long a context fits in memory. Replace the `todo!()`; test with
//! `cargo test -p ch14-generation --features exercise context_that_fits`.

/// The longest context whose KV cache fits in `memory_bytes`.
///
/// # Shapes
/// Scalars: counts (each at least 1), 4 (float32) or 2 (float16, bfloat16) bytes per
/// value, and bytes.
pub fn context_that_fits(
    layers: usize,
    kv_heads: usize,
    head_dim: usize,
    bytes_per_value: usize,
    memory_bytes: u64,
) -> u64 {
    // TODO: predict first, for Llama 3 8B in 16 GiB of float16, with its 8 key/value heads
    // and with 32. Then: what does one more token of context cost?
    let _ = (layers, kv_heads, head_dim, bytes_per_value, memory_bytes);
    todo!("context_that_fits")
}
