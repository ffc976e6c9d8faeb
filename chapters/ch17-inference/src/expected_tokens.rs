//! What a pass of speculative decoding yields on average, when the target keeps every
//! drafted token with the same probability.

/// The expected number of tokens one verification pass writes when each of the `k`
/// drafted tokens is kept with probability `acceptance`, independently, while every one
/// before it was kept; the pass always adds one token of the target's own (the
/// replacement of the first rejected token, or the token after the whole draft).
///
/// # Shapes
/// Scalars: `0 <= acceptance < 1`.
// ANCHOR: expected_tokens_per_pass
pub fn expected_tokens_per_pass(acceptance: f64, k: usize) -> f64 {
    // The pass keeps at least i drafted tokens with probability acceptance^i; the
    // expected count is the sum of those, and the target's own token adds one.
    (1..=k).map(|i| acceptance.powi(i as i32)).sum::<f64>() + 1.0
}
// ANCHOR_END: expected_tokens_per_pass
