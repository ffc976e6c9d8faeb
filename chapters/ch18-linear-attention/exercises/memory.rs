//! Exercise (predict, then derive): where a head's state starts to pay. Replace the
//! `todo!()`; test with `cargo test -p ch18-linear-attention --features exercise
//! state_pays_after`.

/// The fewest tokens after which one head's KV cache holds more numbers than its state.
///
/// # Shapes
/// Scalars, `d_k, d_v >= 1`.
pub fn state_pays_after(d_k: usize, d_v: usize) -> usize {
    // TODO: predict first, for d_k = d_v = 128: after how many tokens does a KV cache
    // hold more numbers than the d_v × d_k state? Then write the inequality between the
    // two counts and solve it for the number of tokens, in whole tokens.
    let _ = (d_k, d_v);
    todo!("state_pays_after")
}
