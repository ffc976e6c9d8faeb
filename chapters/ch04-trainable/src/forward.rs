//! The forward passes of the two self-attention modules: project, score, scale, softmax,
//! and mix the values.
//!
//! Every token attends to every token here, the later ones included; chapter 5 hides the
//! future from each token.

use shared::Tensor;

use crate::scaled::scaled_attention_weights;
use crate::self_attention::{SelfAttentionV1, SelfAttentionV2};

impl SelfAttentionV1 {
    /// The context vector of every token: `softmax(Q·Kᵀ / √d_k) · V` with `Q = x·W_query`,
    /// `K = x·W_key`, `V = x·W_value`.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_in]`. Returns `[tokens, d_out]`.
    // ANCHOR: forward_v1
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let keys = x.matmul(&self.w_key);
        let values = x.matmul(&self.w_value);
        let queries = x.matmul(&self.w_query);

        let scores = queries.matmul(&keys.t()); // ω: [tokens, tokens]
        let weights = scaled_attention_weights(&scores, keys.size(-1));
        weights.matmul(&values)
    }
    // ANCHOR_END: forward_v1
}

impl SelfAttentionV2 {
    /// The same computation with the `Linear` layers: `Q = x·W_queryᵀ (+ b)`, and so on.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_in]`. Returns `[tokens, d_out]`.
    // ANCHOR: forward_v2
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let keys = self.w_key.forward(x);
        let values = self.w_value.forward(x);
        let queries = self.w_query.forward(x);

        let scores = queries.matmul(&keys.t());
        let weights = scaled_attention_weights(&scores, keys.size(-1));
        weights.matmul(&values)
    }
    // ANCHOR_END: forward_v2
}
