//! Workspace-level checks of *Attention from Scratch*.
//!
//! - [`parity`]: runs PyTorch-made fixture files (print and rng) through `shared`; the
//!   `torch-parity` binary is its command-line face.

pub mod parity;
