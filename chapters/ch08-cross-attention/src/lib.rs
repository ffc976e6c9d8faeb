//! # Chapter 8: cross-attention
//!
//! Attention does not need its queries and its keys to come from the same sequence. In
//! the Transformer's decoder (Vaswani et al., 2017, "Attention Is All You Need", section
//! 3.2.3, "encoder-decoder attention"), the queries come from the sentence being
//! generated and the keys and values from the encoded input sentence; Stable Diffusion
//! attends from image features to the words of a prompt the same way. That is
//! cross-attention: the same computation as self-attention, with two inputs.
//!
//! - [`cross`]: Raschka's article's single head, one query of the first sentence attending to a
//!   second sequence of another length;
//! - [`padding`]: a batch of sequences of different lengths is padded to one length, and
//!   a padding mask over the keys keeps the padding out of the attention. Chapter 7's
//!   `MultiHeadAttentionQkv`, which takes separate query, key and value inputs, does the
//!   multi-head cross-attention.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod answers;
#[cfg_attr(feature = "exercise", path = "../exercises/cross.rs")]
pub mod cross;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/padding.rs")]
pub mod padding;
#[cfg_attr(feature = "exercise", path = "../exercises/shuffle.rs")]
pub mod shuffle;
