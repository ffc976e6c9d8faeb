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

mod count;
pub use count::numbers_kept;
#[cfg_attr(feature = "exercise", path = "../../exercises/memory.rs")]
mod crossing;
pub use crossing::state_pays_after;
