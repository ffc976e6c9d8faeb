//! Counting what a head keeps.

use super::Memory;

/// The KV cache and the state of one head after `tokens` tokens.
///
/// # Shapes
/// Scalars.
// ANCHOR: numbers_kept
pub fn numbers_kept(tokens: usize, d_k: usize, d_v: usize) -> Memory {
    Memory {
        kv_cache: tokens * (d_k + d_v),
        state: d_v * d_k,
    }
}
// ANCHOR_END: numbers_kept
