//! # Chapter 19: what trained heads do
//!
//! A two-layer transformer made of attention alone learns to continue repeats. For a long
//! while its loss does not move; then, within a few hundred steps, it falls, while two heads
//! take on jobs you can read off their attention weights: a head of the first layer looks
//! at the previous token, and a head of the second layer looks at the token *after* the
//! earlier occurrence of the current one and copies it. Together they are an induction head
//! (Elhage et al., "A Mathematical Framework for Transformer Circuits", 2021; Olsson et al.,
//! "In-context Learning and Induction Heads", 2022).
//!
//! In reading order:
//! - [`data`]: sequences that end with a repeat of varying length (or a fixed one);
//! - [`model`]: the two-layer attention-only model and its forward pass;
//! - [`train`]: the backward pass through the residual stream, and training;
//! - [`arithmetic`]: the formulas of a training step, or the same in PyTorch's order;
//! - [`pytorch_order`]: the weight gradients summed in PyTorch's blocks, beside the formula;
//! - [`scores`]: the repeated-token loss and the two heads' scores;
//! - [`runs`]: the chapter's two training runs from one seed, and the saved one;
//! - [`checkpoint`]: the trained run, with the parameters at every logged step, saved and
//!   read back;
//! - [`circuits`]: where the heads look, what zeroing one does, what they read and write;
//! - [`heads`]: naming the circuit's heads (the exercises).
//!
//! With `--features exercise`, [`heads`] comes from `exercises/` instead, where the learner
//! writes it.

pub mod arithmetic;
pub mod checkpoint;
pub mod circuits;
pub mod data;
#[cfg_attr(feature = "exercise", path = "../exercises/heads.rs")]
pub mod heads;
pub mod model;
pub mod narrative;
pub mod pytorch_order;
pub mod runs;
pub mod scores;
pub mod train;
