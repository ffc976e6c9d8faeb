//! Exercise: the delta rule's write. Replace the `todo!()`; test with
//! `cargo test -p ch18-linear-attention --features exercise delta_write`.

use shared::Tensor;

/// One delta-rule write: `S + β (v − S k) kᵀ`.
///
/// # Shapes
/// `state`: `[d_v, d_k]`, `key`: `[d_k]`, `value`: `[d_v]`. Returns `[d_v, d_k]`.
pub fn delta_write(state: &Tensor, key: &Tensor, value: &Tensor, beta: f32) -> Tensor {
    // TODO: before you write it, predict: a unit-length key written with value a, then with
    // value b, both with beta = 1. What does `state @ key` return afterwards? And with
    // linear attention's write, `state + value kᵀ`?
    // Then: read what the state holds under the key, and write only the difference, beta
    // times it, as an outer product with the key.
    let _ = (state, key, value, beta);
    todo!("delta_write")
}
