//! What a head keeps in memory after `n` tokens: softmax attention's KV cache against the
//! fixed-size state of linear attention and Gated DeltaNet.

/// The numbers one head keeps after `tokens` tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Softmax attention: every key (`d_k` numbers) and every value (`d_v`).
    pub kv_cache: usize,
    /// Linear attention or Gated DeltaNet: the `d_v × d_k` state.
    pub state: usize,
}

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
