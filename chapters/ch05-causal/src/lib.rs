//! # Chapter 5: causal attention
//!
//! A language model writes text one token at a time, so when it learns to predict the next
//! token, no token may look at the tokens after it: they are the answer. Causal (or masked)
//! attention enforces this by giving every query a weight of exactly 0 for every later key.
//! The clean way is to set those scores to `-inf` before the softmax, since `exp(-inf) = 0`;
//! the weights of the visible keys then sum to 1 by themselves. On top of that, dropout
//! zeroes random attention weights during training (Srivastava et al., 2014), and the whole
//! thing becomes a module that takes a batch of sequences: the decoder's masked
//! self-attention of Vaswani et al., 2017, "Attention Is All You Need".
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod causal_attention;
#[cfg_attr(feature = "exercise", path = "../exercises/forward.rs")]
pub mod forward;
#[cfg_attr(feature = "exercise", path = "../exercises/mask.rs")]
pub mod mask;
#[cfg_attr(feature = "exercise", path = "../exercises/masked_softmax.rs")]
pub mod masked_softmax;
pub mod narrative;
pub mod renormalize;
#[cfg_attr(feature = "exercise", path = "../exercises/sliding_window.rs")]
pub mod sliding_window;

pub use causal_attention::CausalAttention;
pub use mask::causal_mask;
