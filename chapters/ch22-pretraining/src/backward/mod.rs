//! The backward pass of every piece the two models add to chapters 10 and 11, one module
//! each: the norms, the activations, the feed-forward networks, RoPE, and the tied
//! embedding, and grouped-query attention's shared key/value heads (for chapter 23's
//! SmolLM2). Each is the textbook formula; where PyTorch adds or rounds in another order,
//! the twin that follows it is in [`crate::pytorch_order`], with a test that the two agree.

pub mod gelu;
pub mod gpt2;
pub mod layer_norm;
pub mod llama;
pub mod mlp;
pub mod repeat_kv;
#[cfg_attr(feature = "exercise", path = "../../exercises/rms_norm_backward.rs")]
pub mod rms_norm;
pub mod rope;
pub mod silu;
pub mod swiglu;
#[cfg_attr(feature = "exercise", path = "../../exercises/tied_embedding.rs")]
pub mod tied_embedding;

use shared::Tensor;

/// The gradients of a norm: of its input and of its weight.
#[derive(Clone, Debug)]
pub struct NormGrads {
    /// The shape of the norm's input.
    pub input: Tensor,
    /// `[d]`, like the weight.
    pub weight: Tensor,
}
