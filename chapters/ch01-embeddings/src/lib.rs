//! # Chapter 1: from words to vectors
//!
//! A model cannot compute with words, only with numbers. So a sentence is first split into
//! tokens, each token gets an integer id from a vocabulary, and each id picks one row of a
//! learned table: its embedding vector. Attention (the next chapters) then mixes these
//! vectors. The embedding table is `nn.Embedding` from the original Transformer paper
//! (Vaswani et al., 2017, "Attention Is All You Need").
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod answers;
pub mod inputs;
#[cfg_attr(feature = "exercise", path = "../exercises/lookup.rs")]
pub mod lookup;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/one_hot.rs")]
pub mod one_hot;
#[cfg_attr(feature = "exercise", path = "../exercises/vocabulary.rs")]
pub mod vocabulary;
