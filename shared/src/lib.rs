//! A small tensor crate that computes, draws random numbers and prints like PyTorch.

pub mod fmt;
pub mod rng;
