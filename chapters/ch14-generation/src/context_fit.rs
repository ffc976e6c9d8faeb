//! How many tokens of context a memory budget holds, kept in its own file because it is an
//! exercise.

/// The longest context whose KV cache fits in `memory_bytes`: the most tokens `T` with
/// `2 · layers · kv_heads · head_dim · T · bytes_per_value <= memory_bytes`.
///
/// # Shapes
/// Scalars: counts (each at least 1), 4 (float32) or 2 (float16, bfloat16) bytes per
/// value, and bytes.
// ANCHOR: context_that_fits
pub fn context_that_fits(
    layers: usize,
    kv_heads: usize,
    head_dim: usize,
    bytes_per_value: usize,
    memory_bytes: u64,
) -> u64 {
    // One token costs a key and a value per key/value head and layer.
    let per_token = 2 * layers * kv_heads * head_dim * bytes_per_value;
    memory_bytes / per_token as u64
}
// ANCHOR_END: context_that_fits
