//! # Chapter 20: a real model
//!
//! Every earlier chapter ran on drawn weights or a toy it trained itself. Here chapter 15's
//! layers, chapter 14's KV cache, chapter 15's samplers, chapter 17's speculative decoding
//! and chapter 19's head scores run SmolLM2-135M-Instruct (Hugging Face, 2024; Allal et al.,
//! "SmolLM2: When Smol Goes Big"), a Llama-style model of 30 layers trained on 2 trillion
//! tokens, read from the file llama.cpp runs it from, and its answers are the ones Hugging
//! Face's transformers gives, token for token.
//!
//! In reading order:
//! - [`gguf`]: the GGUF file format: header, metadata, tensor infos, quantised blocks;
//! - [`unpermute`]: llama.cpp's interleaved rows of `W_q` and `W_k` back to half-split
//!   (chapter 12's two RoPE conventions);
//! - [`config`] and [`weights`]: the configuration and the parameters, by name, from a
//!   GGUF file or a transformers checkpoint;
//! - [`model`]: chapter 15's model filled with them;
//! - [`tokenizer`] and [`chat`]: text to ids with Hugging Face's `tokenizers`, and the chat
//!   template;
//! - [`loader`]: finding and opening a model;
//! - [`generate`]: greedy and sampled decoding with chapter 14's cache, streamed, and
//!   [`growing_cache`]: the cache grown in place, so that a long conversation does not
//!   slow decoding down;
//! - [`quantised`] (`--weights q4`, optional): the same model with its matrices kept in
//!   the file's quantised blocks, each weight computed inside the product, the same bits;
//! - [`sink`], [`lookup`], [`heads`]: attention sinks, prompt lookup's draft and induction
//!   heads, measured on the model;
//! - [`ablation`] and [`streaming`] (`--interventions`): heads switched off, and a window
//!   that evicts the sink, to see what the model loses.
//!
//! The exercises' own modules: [`interleave`] (the converter's direction of [`unpermute`]),
//! [`eviction`] (what a sliding window drops), [`induction_key`], [`speed`] and
//! [`resample`] (a head switched off with its output on other tokens).

pub mod ablation;
pub mod chat;
pub mod cli;
pub mod config;
pub mod error;
#[cfg_attr(feature = "exercise", path = "../exercises/eviction.rs")]
pub mod eviction;
pub mod generate;
pub mod gguf;
pub mod growing_cache;
pub mod heads;
#[cfg_attr(feature = "exercise", path = "../exercises/induction_key.rs")]
pub mod induction_key;
#[cfg_attr(feature = "exercise", path = "../exercises/interleave.rs")]
pub mod interleave;
pub mod loader;
pub mod lookup;
pub mod model;
pub mod narrative;
pub mod quantised;
pub mod reference;
#[cfg_attr(feature = "exercise", path = "../exercises/resample.rs")]
pub mod resample;
pub mod setup;
pub mod sink;
#[cfg_attr(feature = "exercise", path = "../exercises/speed.rs")]
pub mod speed;
pub mod streaming;
pub mod tokenizer;
pub mod unpermute;
pub mod weights;

pub use error::LoadError;
