//! Exercise: a chunked causal mask_mod. Replace the `todo!()`; test with
//! `cargo test -p ch16-flex-attention --features exercise --test exercises exercise_chunked`.

use crate::recipes::MaskMod;

/// The chunked causal mask_mod: `kv_idx ≤ q_idx`, both in the same chunk of `chunk`
/// tokens.
///
/// # Shapes
/// Indices only; `chunk > 0`.
pub fn chunked_causal(chunk: usize) -> impl MaskMod + Copy {
    // TODO: return a closure `move |_b, _h, q_idx, kv_idx| ...`: true when the key is not
    // after the query and both positions fall in the same chunk of `chunk` tokens.
    let _ = chunk;
    |_b: usize, _h: usize, _q_idx: usize, _kv_idx: usize| -> bool {
        todo!("chunked_causal")
    }
}
