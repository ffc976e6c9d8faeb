//! Where the state starts to pay: the length after which a KV cache outgrows it.

/// The fewest tokens after which one head's KV cache holds more numbers than its state:
/// the smallest `n` with `n · (d_k + d_v) > d_v · d_k`.
///
/// # Shapes
/// Scalars, `d_k, d_v >= 1`.
// ANCHOR: state_pays_after
pub fn state_pays_after(d_k: usize, d_v: usize) -> usize {
    // n · (d_k + d_v) > d_v · d_k  ⇔  n > d_v · d_k / (d_k + d_v): one more than the
    // whole part of the quotient.
    d_v * d_k / (d_k + d_v) + 1
}
// ANCHOR_END: state_pays_after
