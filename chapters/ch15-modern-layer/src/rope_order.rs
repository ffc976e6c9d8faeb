//! Whether QK-norm and RoPE may change places.
//!
//! QK-norm divides a head's vector by its root mean square and multiplies feature `i` by a
//! gain `g_i`; RoPE turns the features of each pair (`i` and `i + d/2`, the halves of
//! `rotate_half`) by an angle. A rotation keeps the length, so the division commutes with
//! it. The gains commute with the rotation of a pair exactly when the pair's two gains are
//! equal: a rotation commutes with a multiple of the identity, and with no other diagonal
//! matrix. A model's gains start at 1 and training moves them apart, so Qwen3 and Gemma 3
//! must, and do, normalise first.

/// Whether QK-norm with the gains `gain` gives the same vectors before RoPE as after it,
/// for every head vector and every position.
///
/// # Shapes
/// `gain`: `[head_dim]`, `head_dim` even.
// ANCHOR: norm_and_rope_commute
pub fn norm_and_rope_commute(gain: &[f32]) -> bool {
    let half = gain.len() / 2;
    (0..half).all(|i| gain[i] == gain[i + half])
}
// ANCHOR_END: norm_and_rope_commute
