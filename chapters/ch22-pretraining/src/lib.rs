//! # Chapter 22: pretraining on Shakespeare
//!
//! (Work in progress: the data and tokenizers, the two models and their backward pass are
//! being written in parallel; see the modules.)
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
//! - [`train`]: the loss and gradients, AdamW with its schedule, evaluation.

pub mod arithmetic;
pub mod backward;
pub mod batches;
pub mod clip;
pub mod config;
pub mod model;
pub mod pytorch_order;
pub mod train;
