//! Exercise: the forward pass of `CausalAttention`. Replace the `todo!()`; test with
//! `cargo test -p ch05-causal --features exercise causal_attention_forward`.
//! The struct and its `new` are in `src/causal_attention.rs`; solve `causal_mask` and
//! `masked_softmax` first, this uses them.

use shared::Tensor;

use crate::causal_attention::CausalAttention;

impl CausalAttention {
    /// The context vector of every token of every sequence, each a mix of the values of its
    /// own and earlier tokens only.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]` with `tokens <= context_length`. Returns
    /// `[batch, tokens, d_out]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: project x into keys, values and queries with the three layers; score the
        // queries against the keys of the same sequence (transpose the last two dims of the
        // keys); cut the top-left tokens × tokens corner out of `self.mask`; turn the scores
        // into weights with `crate::masked_softmax::masked_softmax`; pass the weights
        // through `self.dropout`; return weights · values.
        let _ = x;
        todo!("CausalAttention::forward")
    }
}
