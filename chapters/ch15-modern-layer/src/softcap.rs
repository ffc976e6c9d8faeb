//! Logit softcapping (Gemma 2): `cap · tanh(score / cap)`.
//!
//! A score far below the cap passes almost unchanged (`tanh(z) ≈ z` for small `z`); a
//! large one is bent towards `±cap`, so no single key can take all of a softmax's weight
//! however large its score grows. Gemma 2 caps attention scores at 50 and final logits at
//! 30; Gemma 3 dropped the attention cap for QK-norm.

use shared::Tensor;

/// `cap · tanh(scores / cap)`, elementwise.
///
/// # Shapes
/// Any shape; unchanged.
// ANCHOR: softcap
pub fn softcap(scores: &Tensor, cap: f32) -> Tensor {
    cap * (scores / cap).tanh()
}
// ANCHOR_END: softcap
