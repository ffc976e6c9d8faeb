//! Raschka's article's multi-head attention with all heads in one tensor.
//!
//! One head has three weight matrices (query, key, value). `h` heads have `h` of each, so
//! Raschka's article stacks them into `[h, d_out, d]` tensors. To project every token in every head
//! at once, the inputs are stacked `h` times too, and `bmm` (batch matrix multiply) does
//! one matrix product per head. After that each head is the single-head attention of
//! chapter 4, run on its own keys and values.
//!
//! Raschka's article writes weights as `[d_out, d]` and multiplies `W·x` (a column vector), so a
//! token's key is `W_key.matmul(x)`; for a whole sequence it is `W_key·Xᵀ`, shape
//! `[d_out, n]`, which we turn back into one row per token.

use shared::{Tensor, stack};

/// The keys (or values, or queries) of every token in every head: for each head `i`,
/// `w[i]·xᵀ`, turned to one row per token. This is Raschka's article's three steps: stack the
/// inputs once per head (`repeat`), one product per head (`bmm`), then swap the last two
/// dims (`permute`) so that the result has the layout of the input sequence.
///
/// # Shapes
/// `w`: `[heads, d_out, d]`, `x`: `[tokens, d]`. Returns `[heads, tokens, d_out]`.
// ANCHOR: project_heads
pub fn project_heads(w: &Tensor, x: &Tensor) -> Tensor {
    let heads = w.size(0);
    // [tokens, d] -> [d, tokens] -> [heads, d, tokens]: the same inputs for every
    // head.
    let stacked_inputs = x.t().repeat(&[heads, 1, 1]);
    // [heads, d_out, d] · [heads, d, tokens] = [heads, d_out, tokens].
    let projected = w.bmm(&stacked_inputs);
    // One row per token, as in the input: [heads, tokens, d_out].
    projected.permute(&[0, 2, 1])
}
// ANCHOR_END: project_heads

/// Each head's context vector for one query: chapter 4's single-head step (scores
/// `ω = q·Kᵀ`, weights `softmax(ω/√d_k)`, context `weights·V`), once per head, stacked.
/// The heads never mix: head `i` only sees `queries[i]`, `keys[i]` and `values[i]`.
///
/// # Shapes
/// `queries`: `[heads, d_k]` (one query token), `keys`: `[heads, tokens, d_k]`,
/// `values`: `[heads, tokens, d_v]`. Returns `[heads, d_v]`.
// ANCHOR: head_contexts
pub fn head_contexts(queries: &Tensor, keys: &Tensor, values: &Tensor) -> Tensor {
    let d_k = keys.size(-1) as f32;
    let contexts: Vec<Tensor> = (0..queries.size(0))
        .map(|i| {
            let omega = queries.get(i).matmul(&keys.get(i).t()); // [tokens]
            let weights = (&omega / d_k.sqrt()).softmax(0); // [tokens], sums to 1
            weights.matmul(&values.get(i)) // [d_v]
        })
        .collect();
    stack(&contexts, 0)
}
// ANCHOR_END: head_contexts
