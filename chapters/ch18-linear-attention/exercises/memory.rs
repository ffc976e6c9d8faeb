//! Exercise: the memory of a head, KV cache against state. Replace the `todo!()`; test with
//! `cargo test -p ch18-linear-attention --features exercise numbers_kept`.

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
pub fn numbers_kept(tokens: usize, d_k: usize, d_v: usize) -> Memory {
    // TODO: before you write it, predict: with d_k = d_v = 128, after how many tokens does
    // the KV cache hold more numbers than the state? Then count both.
    let _ = (tokens, d_k, d_v);
    todo!("numbers_kept")
}
