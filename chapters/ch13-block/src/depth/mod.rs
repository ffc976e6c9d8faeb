//! Pre-norm or post-norm: how much gradient reaches the first block of a deep stack.
//!
//! A post-norm block normalises the stream after each sub-layer; a pre-norm block adds
//! into a stream it never normalises. The gradient of a loss at the output, carried back to
//! the input of the first block, passes through every block on the way; the exercise
//! [`input_gradient`] measures it by central differences, for a stack of either kind.

use shared::Tensor;

use crate::block::TransformerBlock;

#[cfg_attr(feature = "exercise", path = "../../exercises/input_gradient.rs")]
mod gradient;
pub use gradient::input_gradient;

/// Where each block of a stack normalises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormPlacement {
    /// GPT-2: `x + attn(ln_1(x))`, then `x + mlp(ln_2(x))`.
    PreNorm,
    /// The original Transformer: `ln_1(x + attn(x))`, then `ln_2(x + mlp(x))`.
    PostNorm,
}

/// `blocks` applied one after the other.
///
/// # Shapes
/// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
pub fn stack_forward(
    blocks: &[TransformerBlock],
    x: &Tensor,
    placement: NormPlacement,
) -> Tensor {
    blocks.iter().fold(x.clone(), |x, block| match placement {
        // The pre-norm forward pass written out here, so that this experiment does not
        // depend on the exercise `block_forward`.
        NormPlacement::PreNorm => {
            let x = &x + &block.attn.forward(&block.ln_1.forward(&x));
            &x + &block.mlp.forward(&block.ln_2.forward(&x))
        }
        NormPlacement::PostNorm => block.forward_post_norm(&x),
    })
}
