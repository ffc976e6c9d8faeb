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
//! `most_frequent_pair` and `merge`), the baselines' add-one smoothing, RMSNorm's
//! backward, the tied embedding's gradient and the loss before training
//! ([`first_loss`]) come from `exercises/` instead, where the learner writes them.
//!
//! The models and their training, in reading order:
//! - [`config`]: the sizes of a model and of a batch (nanoGPT's baby GPT);
//! - [`model`]: the two models from the course's layers, GPT-2 and Llama, and nanoGPT's
//!   initialisation;
//! - [`backward`]: the backward pass of every piece chapters 10 and 11 did not have, and
//!   of both whole models;
//! - [`arithmetic`] and [`pytorch_order`]: the formulas, or the same sums in PyTorch's
//!   order, for the last bits;
//! - [`batches`]: nanoGPT's `get_batch`;
//! - [`clip`]: the gradients clipped to a global norm;
//! - [`first_loss`]: the loss to expect before the first step;
//! - [`train`]: the loss and gradients, AdamW with its schedule, evaluation;
//! - [`runs`]: a run with evaluations on fixed batches of both texts;
//! - [`card`]: the parameters of a model counted by part;
//! - [`sample`]: text drawn from a model one token at a time;
//! - [`weights`]: a trained model's weights as safetensors;
//! - [`encoder`] and [`cli`]: either tokenizer, and the command line's training runs;
//! - [`checkpoint`]: a run saved and resumed with the same losses, written through
//!   [`files`] so that a failed run loses nothing;
//! - [`export`]: the trained Llama in the Hugging Face Hub's layout, which transformers
//!   and chapter 20 read;
//! - [`save_flags`]: the command line's `--save`, `--checkpoint` and `--resume`.

pub mod arithmetic;
pub mod backward;
pub mod baselines;
pub mod batches;
pub mod bpe;
pub mod card;
pub mod chars;
pub mod checkpoint;
pub mod cli;
pub mod clip;
pub mod config;
pub mod data;
pub mod encoder;
pub mod export;
pub mod files;
#[cfg_attr(feature = "exercise", path = "../exercises/first_loss.rs")]
pub mod first_loss;
pub mod model;
pub mod narrative;
pub mod pytorch_order;
pub mod runs;
pub mod sample;
pub mod save_flags;
pub mod setup;
pub mod tokenizer_json;
pub mod train;
pub mod weights;
