//! # Chapter 2: attention scores as dot products
//!
//! Attention builds, for every token, a *context vector*: a mix of all the tokens' vectors
//! in which the tokens that matter most to it weigh the most. How much token `j` matters to
//! token `i` starts as a number, the *attention score*; the simplest score is the dot
//! product of the two vectors, large when they point the same way. Normalised so they are
//! positive and add up to 1, the scores become *attention weights*, and the context vector
//! is the weighted sum of the inputs.
//!
//! The chapter does this first for one query token with plain loops (one dot product, one
//! weighted term at a time) and then for all tokens at once with two matrix products, which
//! is how every later chapter writes it. Attention itself comes from Bahdanau, Cho and
//! Bengio (2014), "Neural Machine Translation by Jointly Learning to Align and Translate";
//! scoring by dot products from Luong, Pham and Manning (2015), and in its scaled form from
//! Vaswani et al. (2017), "Attention Is All You Need". Here there are no trainable weights
//! yet: the tokens' own embeddings play query, key and value (chapter 4 adds them).
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

#[cfg_attr(feature = "exercise", path = "../exercises/all_at_once.rs")]
pub mod all_at_once;
pub mod answers;
#[cfg_attr(feature = "exercise", path = "../exercises/context.rs")]
pub mod context;
pub mod narrative;
pub mod normalise;
#[cfg_attr(feature = "exercise", path = "../exercises/scores.rs")]
pub mod scores;
#[cfg_attr(feature = "exercise", path = "../exercises/top_key.rs")]
pub mod top_key;
