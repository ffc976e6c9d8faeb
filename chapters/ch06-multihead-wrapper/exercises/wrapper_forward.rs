//! Exercise: the forward pass of the multi-head wrapper. Replace the `todo!()`; test with
//! `cargo test -p ch06-multihead-wrapper --features exercise wrapper_forward`.

use shared::Tensor;

use crate::wrapper::MultiHeadAttentionWrapper;

impl MultiHeadAttentionWrapper {
    /// Runs every head on `x` and concatenates their outputs along the last dim.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]`. Returns `[batch, tokens, num_heads · d_out]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: run each head of self.heads on x (chapter 5's CausalAttention::forward),
        // then concatenate the outputs along the last dim, head 0 first.
        let _ = x;
        todo!("MultiHeadAttentionWrapper::forward")
    }
}
