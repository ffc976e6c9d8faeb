//! # Chapter 11: training: attention learns
//!
//! Every chapter so far ran attention on random weights. Here a small model learns: token
//! and position embeddings, chapter 7's causal multi-head attention and a linear head are
//! trained, with chapter 10's backward pass and an optimizer written by hand, on a task
//! only attention can solve: output the token two places back. After a few dozen steps
//! the attention weights show the solution, every position looking two places back.
//!
//! In reading order:
//! - [`task`]: the task, its random batches and its targets;
//! - [`model`]: the model and its forward pass;
//! - [`cross_entropy`]: the loss and its gradient with respect to the logits;
//! - [`embedding_backward`]: the gradient of an embedding table;
//! - [`adamw`]: the optimizer, as `torch.optim.AdamW` computes it;
//! - [`train`]: one training step, forward, backward and update, and the training loop;
//! - [`run`]: the chapter's run, trained from one seed, and what it shows;
//! - [`prediction`]: where the trained attention looks, for any shift (an exercise);
//! - [`bias_correction`] and [`weight_decay`]: two questions about AdamW, derived
//!   (exercises);
//! - [`pytorch_order`]: the loss's backward and AdamW in PyTorch's order of roundings,
//!   beside the formulas (the book's appendix says why).
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod adamw;
#[cfg_attr(feature = "exercise", path = "../exercises/bias_correction.rs")]
pub mod bias_correction;
pub mod cross_entropy;
#[cfg_attr(feature = "exercise", path = "../exercises/embedding_backward.rs")]
pub mod embedding_backward;
pub mod model;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/predicted_focus.rs")]
pub mod prediction;
pub mod pytorch_order;
pub mod run;
pub mod task;
pub mod train;
#[cfg_attr(feature = "exercise", path = "../exercises/weight_decay.rs")]
pub mod weight_decay;
