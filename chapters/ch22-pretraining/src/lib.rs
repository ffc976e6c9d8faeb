//! # Chapter 22: pretraining on Shakespeare
//!
//! A model the reader wrote learns to write: trained from scratch on Shakespeare's
//! plays and poems, with the course's own forward and backward passes, every printed
//! loss equal to PyTorch's. Before any model, the text itself: the numbers a model
//! must beat, and the two ways of cutting it into tokens, one character each
//! (nanoGPT's `shakespeare_char`) or byte-pair encoding (Sennrich, Haddow and Birch,
//! "Neural Machine Translation of Rare Words with Subword Units", 2016).
//!
//! In reading order:
//! - [`data`]: the text, read and checked, split 90/10;
//! - [`baselines`]: the validation loss of guessing, of letter frequencies and of
//!   letter pairs;
//! - [`chars`]: the character tokenizer;
//! - [`bpe`]: byte-pair encoding, trained by hand: count pairs, merge the most
//!   frequent;
//! - [`tokenizer_json`]: the same encoding in Hugging Face's `tokenizers`, saved as a
//!   `tokenizer.json`;
//! - [`setup`]: the chapter's choices.
//!
//! With `--features exercise`, one step of byte-pair encoding (`bpe`'s
//! `most_frequent_pair` and `merge`) and the baselines' add-one smoothing come from
//! `exercises/` instead, where the learner writes them.

pub mod baselines;
pub mod bpe;
pub mod chars;
pub mod data;
pub mod narrative;
pub mod setup;
pub mod tokenizer_json;
