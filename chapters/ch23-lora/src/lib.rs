//! # Chapter 23: teaching SmolLM2 arithmetic with LoRA
//!
//! Chapter 20's model, asked "What is 17 + 25?", answers with a wrong sum. This chapter
//! fine-tunes it, with low-rank adapters (Hu et al., 2021, "LoRA: Low-Rank Adaptation of
//! Large Language Models") beside the frozen projections and the course's own backward
//! pass, every loss equal to PyTorch + PEFT's, and saves the adapter in PEFT's own files.
//!
//! In reading order:
//! - [`task`] and [`examples`]: the sums, a held-out set never trained on, and the tokens
//!   the model reads, the answer's alone labelled;
//! - [`masked_loss`]: cross-entropy with an ignore index, the loss on the answer alone;
//! - [`lora`]: one adapter beside one projection, its forward, backward and merge;
//! - [`targets`], [`adapter`] and [`count`]: which projections, the adapters of a whole
//!   model, and how many numbers they train; [`savings`]: the memory that spares against
//!   training the same projections in full;
//! - [`forward`] and [`backward`]: the model with its adapters, and the backward pass
//!   through the frozen model that computes only the adapters' weight gradients;
//! - [`train`]: a step of AdamW on the adapters;
//! - [`peft`]: PEFT's `adapter_config.json` and `adapter_model.safetensors`;
//! - [`hub`]: the model with its adapter merged in, saved as a transformers folder;
//! - [`accuracy`]: the held-out sums answered by greedy decoding;
//! - [`tiny`]: the chapter's run on the tiny checkpoint;
//! - [`setup`], [`narrative`] and [`cli`]: the chapter's choices, its printed steps and
//!   its command line.
//!
//! With `--features exercise`, the masked loss ([`masked_loss::masked_cross_entropy`]),
//! the count of trainable numbers ([`count`]), the adapter's gradients ([`Lora::grads`])
//! and a prediction about the first step ([`first_step`]) come from `exercises/` instead.

pub mod accuracy;
pub mod adapter;
pub mod answers;
pub mod backward;
pub mod cli;
#[cfg_attr(feature = "exercise", path = "../exercises/count.rs")]
pub mod count;
pub mod error;
pub mod examples;
#[cfg_attr(feature = "exercise", path = "../exercises/first_step.rs")]
pub mod first_step;
pub mod forward;
pub mod hub;
pub mod lora;
pub mod masked_loss;
pub mod narrative;
pub mod peft;
pub mod savings;
pub mod setup;
pub mod targets;
pub mod task;
pub mod tiny;
pub mod train;

pub use error::LoraError;
pub use lora::Lora;
