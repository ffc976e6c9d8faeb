//! The delta rule: write a value under a key by replacing what the key reads, not adding.
//!
//! Linear attention's state only adds, `S += v kᵀ`: write two values under the same key and
//! reading the key (`S k`) returns their sum. The delta rule (Widrow and Hoff's error
//! correction, brought to attention by Schlag, Irie and Schmidhuber, "Linear Transformers Are
//! Secretly Fast Weight Programmers") first reads what the state predicts for the key,
//! `v_old = S k`, and writes only the correction, scaled by a write strength `β`:
//! `S ← S + β (v − S k) kᵀ = S (I − β k kᵀ) + β v kᵀ`. With a unit-length key and `β = 1`
//! the key then reads exactly `v`: the old value is gone.

use shared::Tensor;

/// One delta-rule write: `S + β (v − S k) kᵀ`.
///
/// # Shapes
/// `s` (the state): `[d_v, d_k]`, `k` (the key): `[d_k]`, `v` (the value): `[d_v]`.
/// Returns `[d_v, d_k]`.
// ANCHOR: delta_write
pub fn delta_write(s: &Tensor, k: &Tensor, v: &Tensor, beta: f32) -> Tensor {
    let v_old = s.matmul(k);
    s + beta * (v - v_old).outer(k)
}
// ANCHOR_END: delta_write
