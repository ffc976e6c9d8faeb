//! Exercise (derive, then check): what one pass of speculative decoding yields. Replace
//! the `todo!()`; test with
//! `cargo test -p ch17-inference --features exercise expected_tokens_per_pass`.

/// The expected number of tokens one verification pass writes when each of the `k`
/// drafted tokens is kept with probability `acceptance`, independently, while every one
/// before it was kept; the pass always adds one token of the target's own (the
/// replacement of the first rejected token, or the token after the whole draft).
///
/// # Shapes
/// Scalars: `0 <= acceptance < 1`.
pub fn expected_tokens_per_pass(acceptance: f64, k: usize) -> f64 {
    // TODO: with what probability does a pass keep exactly n drafted tokens, for n from 0
    // to k? Write the expectation of the tokens it writes, and simplify it if you can.
    // Then predict: with the chapter's greedy acceptance of 0.14 and k = 3, is a longer
    // draft worth its cost?
    let _ = (acceptance, k);
    todo!("expected_tokens_per_pass")
}
