//! The forward pass of [`MultiHeadAttentionWrapper`], kept in its own file because it is an
//! exercise.

use shared::{Tensor, cat};

use crate::wrapper::MultiHeadAttentionWrapper;

impl MultiHeadAttentionWrapper {
    /// Runs every head on `x` and concatenates their outputs along the last dim:
    /// `torch.cat([head(x) for head in self.heads], dim=-1)`. Features `i·d_out ..
    /// (i+1)·d_out` of every token come from head `i`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_in]`. Returns `[batch, tokens, num_heads · d_out]`.
    // ANCHOR: wrapper_forward
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let outputs: Vec<Tensor> = self.heads.iter().map(|h| h.forward(x)).collect();
        cat(&outputs, -1)
    }
    // ANCHOR_END: wrapper_forward
}
