//! The forward pass of [`CausalAttention`]: chapter 4's attention with the future masked
//! out and dropout on the weights.

use shared::Tensor;

use crate::causal_attention::CausalAttention;
use crate::masked_softmax::masked_softmax;

impl CausalAttention {
    /// The context vector of every token of every sequence in the batch, each one a mix of
    /// the values of its own and earlier tokens only.
    ///
    /// The article transposes the keys with `transpose(1, 2)`; `transpose(-2, -1)` is the
    /// same for a batch and also accepts a single sequence `[tokens, d_in]`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]` with `tokens <= context_length`. Returns
    /// `[batch, tokens, d_out]`.
    ///
    /// # Panics
    /// If `tokens > context_length` (the mask is too small) or `d_in` does not fit the
    /// layers.
    // ANCHOR: forward
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let num_tokens = x.size(-2);
        let keys = self.w_key.forward(x);
        let values = self.w_value.forward(x);
        let queries = self.w_query.forward(x);

        // [batch, tokens, tokens]: the batch stays first, the keys are transposed
        // per sequence.
        let scores = queries.matmul(&keys.transpose(-2, -1));
        let mask = self.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
        let weights = masked_softmax(&scores, &mask, keys.size(-1));
        let weights = self.dropout.forward(&weights);
        weights.matmul(&values)
    }
    // ANCHOR_END: forward
}
