//! Exercise: the delta rule's write. Replace the `todo!()`; test with
//! `cargo test -p ch18-linear-attention --features exercise delta_write`.

use shared::Tensor;

/// One delta-rule write: `S + β (v − S k) kᵀ`.
///
/// # Shapes
/// `s` (the state): `[d_v, d_k]`, `k` (the key): `[d_k]`, `v` (the value): `[d_v]`.
/// Returns `[d_v, d_k]`.
pub fn delta_write(s: &Tensor, k: &Tensor, v: &Tensor, beta: f32) -> Tensor {
    // TODO: before you write it, predict: a unit-length key written with value a, then with
    // value b, both with beta = 1. What does `s @ k` return afterwards? And with linear
    // attention's write, `s + v kᵀ`?
    // Then: read what the state holds under the key, and write only the difference, beta
    // times it, as an outer product with the key.
    let _ = (s, k, v, beta);
    todo!("delta_write")
}
