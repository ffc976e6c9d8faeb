//! Chunked causal attention (Llama 4's local layers): the sequence is cut into chunks of
//! `chunk` tokens, and a query sees the keys before it in its own chunk only. Unlike a
//! sliding window, the first query of a chunk sees only itself.

use crate::recipes::MaskMod;

/// The chunked causal mask_mod: `kv_idx ≤ q_idx`, both in the same chunk of `chunk`
/// tokens.
///
/// # Shapes
/// Indices only; `chunk > 0`.
// ANCHOR: chunked_causal
pub fn chunked_causal(chunk: usize) -> impl MaskMod + Copy {
    move |_b, _h, q_idx, kv_idx| q_idx / chunk == kv_idx / chunk && kv_idx <= q_idx
}
// ANCHOR_END: chunked_causal
