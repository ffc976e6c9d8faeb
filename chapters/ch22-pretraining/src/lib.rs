//! # Chapter 22: pretraining on Shakespeare
//!
//! (Work in progress: the data and tokenizers, the two models and their backward pass are
//! being written in parallel; see the modules.)
