//! Exercise: the forward pass of the pre-norm transformer block. Replace the `todo!()`;
//! test with `cargo test -p ch13-block --features exercise block_forward`.

use shared::Tensor;

use super::TransformerBlock;

impl TransformerBlock {
    /// The pre-norm block: `x + attn(ln_1(x))`, then that plus `mlp(ln_2(..))`.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: normalise x with self.ln_1, run self.attn on it and add the result to x
        // (not to the normalised copy): that is the residual stream after attention. Then
        // do the same with self.ln_2 and self.mlp, and return the sum.
        let _ = x;
        todo!("TransformerBlock::forward")
    }
}
