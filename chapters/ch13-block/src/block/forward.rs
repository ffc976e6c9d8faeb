//! The forward pass of [`TransformerBlock`], kept in its own file because it is an
//! exercise.

use shared::Tensor;

use super::TransformerBlock;

impl TransformerBlock {
    /// The pre-norm block: `x + attn(ln_1(x))`, then that plus `mlp(ln_2(..))`.
    ///
    /// Each sub-layer sees a normalised copy of the stream but writes into the stream
    /// itself, so the path from the input to the output is a chain of additions: the
    /// gradient reaches the first layer of a deep stack undiminished, which is why GPT-2
    /// moved the layer norms in front of the sub-layers.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]` with `tokens <= context_length`.
    /// Returns `[batch, tokens, d_model]`.
    // ANCHOR: block_forward
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let x = x + &self.attn.forward(&self.ln_1.forward(x));
        &x + &self.mlp.forward(&self.ln_2.forward(&x))
    }
    // ANCHOR_END: block_forward
}
